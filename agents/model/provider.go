package model

import (
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Providers: the wire protocol a model entry speaks.
const (
	// ProviderOpenAIChat is POST {base_url}/chat/completions (vLLM, SGLang,
	// OpenAI); the default.
	ProviderOpenAIChat = "openai-chat"
	// ProviderOpenAIResponses is OpenAI's Responses API, POST
	// {base_url}/responses with base_url ending in /v1.
	ProviderOpenAIResponses = "openai-responses"
	// ProviderAnthropic is Anthropic's Messages API, POST
	// {base_url}/v1/messages with base_url the API root.
	ProviderAnthropic = "anthropic"
)

// DefaultPollInterval is how often a background Responses request is polled.
const DefaultPollInterval = 2 * time.Second

// efforts are the reasoning_effort values each provider's API accepts.
var efforts = map[string][]string{
	ProviderOpenAIChat:      {"none", "minimal", "low", "medium", "high", "xhigh"},
	ProviderOpenAIResponses: {"none", "minimal", "low", "medium", "high", "xhigh"},
	ProviderAnthropic:       {"low", "medium", "high", "xhigh", "max"},
}

// ProviderName is the provider with the default applied.
func (c Config) ProviderName() string {
	if c.Provider == "" {
		return ProviderOpenAIChat
	}
	return c.Provider
}

// CheckProvider checks provider, reasoning_effort, background and the
// base_url shape the provider expects.
func (c Config) CheckProvider() error {
	p := c.ProviderName()
	allowed, ok := efforts[p]
	if !ok {
		return fmt.Errorf("model %s: provider %q: want %s, %s or %s", c.Name, c.Provider, ProviderOpenAIChat, ProviderOpenAIResponses, ProviderAnthropic)
	}
	if c.ReasoningEffort != "" && !slices.Contains(allowed, c.ReasoningEffort) {
		return fmt.Errorf("model %s: reasoning_effort %q is not one provider %s accepts (%s)", c.Name, c.ReasoningEffort, p, strings.Join(allowed, ", "))
	}
	if c.Background && p != ProviderOpenAIResponses {
		return fmt.Errorf("model %s: background applies to provider %s only", c.Name, ProviderOpenAIResponses)
	}
	if c.PollInterval < 0 {
		return fmt.Errorf("model %s: poll_interval must not be negative", c.Name)
	}
	u, _ := url.Parse(c.BaseURL)
	switch {
	case p == ProviderAnthropic && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1"):
		return fmt.Errorf("model %s: provider anthropic takes the API root as base_url (https://api.anthropic.com), not %q: the client adds /v1/messages", c.Name, c.BaseURL)
	case p == ProviderOpenAIResponses && !strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/v1"):
		return fmt.Errorf("model %s: provider openai-responses takes a base_url ending in /v1 (https://api.openai.com/v1), not %q: the client adds /responses", c.Name, c.BaseURL)
	}
	return nil
}

// Opener builds a Client of one provider from a validated Config.
type Opener func(cfg Config, log *slog.Logger) (Client, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// RegisterProvider makes Open build name's clients with open. The provider
// packages (agents/model/responses, agents/model/anthropic) register
// themselves from init; agents/model/providers links them all in.
func RegisterProvider(name string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[name] = open
}

// Open builds the client of cfg's provider: New for openai-chat, the
// registered Opener for the others.
func Open(cfg Config, log *slog.Logger) (Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := cfg.ProviderName()
	if p == ProviderOpenAIChat {
		return New(cfg, log)
	}
	openersMu.RLock()
	open, ok := openers[p]
	openersMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("model %s: provider %s is not linked into this program (import agents/model/providers)", cfg.Name, p)
	}
	return open(cfg, log)
}

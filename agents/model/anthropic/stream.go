package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
)

// MaxBlocks bounds the content-block index a stream may use.
const MaxBlocks = 1024

// assembly is a message being put together from its events.
type assembly struct {
	started, stopped bool
	stop             string
	usage            Usage
	text, thinking   strings.Builder
	blocks           map[int]string // index → block type
}

// read assembles a message from the event stream. A stream that ends
// before message_stop is model.ErrTruncatedStream; an error event is a
// *model.APIError with the status of its type (overloaded → 529, retried).
func (c *Client) read(r io.Reader) (model.Response, error) {
	a := &assembly{blocks: map[int]string{}}
	br := bufio.NewReader(r)
	var data bytes.Buffer
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0 && data.Len() > 0:
				if err := a.event(data.Bytes(), c); err != nil {
					return model.Response{}, err
				}
				data.Reset()
			case bytes.HasPrefix(line, []byte("data:")):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
			}
		}
		if a.stopped {
			return a.response(), nil
		}
		if errors.Is(err, io.EOF) {
			return model.Response{}, fmt.Errorf("%w (message_start seen %v, stop_reason %q, %d text bytes so far)",
				model.ErrTruncatedStream, a.started, a.stop, a.text.Len())
		}
		if err != nil {
			return model.Response{}, err
		}
	}
}

// event applies one event's data.
func (a *assembly) event(data []byte, c *Client) error {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("event %.80q: %v: %w", data, err, model.ErrBadReply)
	}
	if ev.Type != "message_start" && ev.Type != "ping" && ev.Type != "error" && !a.started {
		return fmt.Errorf("event %s before message_start: %w", ev.Type, model.ErrBadReply)
	}
	switch ev.Type {
	case "message_start":
		if ev.Message == nil {
			return fmt.Errorf("message_start without a message: %w", model.ErrBadReply)
		}
		a.started, a.usage = true, ev.Message.Usage
	case "content_block_start":
		if ev.ContentBlock == nil || ev.Index < 0 || ev.Index >= MaxBlocks {
			return fmt.Errorf("content_block_start index %d without a block or out of range: %w", ev.Index, model.ErrBadReply)
		}
		a.blocks[ev.Index] = ev.ContentBlock.Type
		a.text.WriteString(ev.ContentBlock.Text)
		a.thinking.WriteString(ev.ContentBlock.Thinking)
	case "content_block_delta":
		if ev.Delta == nil {
			return fmt.Errorf("content_block_delta without a delta: %w", model.ErrBadReply)
		}
		if _, ok := a.blocks[ev.Index]; !ok {
			return fmt.Errorf("content_block_delta for block %d that never started: %w", ev.Index, model.ErrBadReply)
		}
		switch ev.Delta.Type {
		case "text_delta":
			a.text.WriteString(ev.Delta.Text)
		case "thinking_delta":
			a.thinking.WriteString(ev.Delta.Thinking)
		}
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != nil {
			a.stop = *ev.Delta.StopReason
		}
		if u := ev.Usage; u != nil {
			a.usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 { // newer API versions repeat the cumulative input counts
				a.usage.InputTokens, a.usage.CacheCreationInputTokens, a.usage.CacheReadInputTokens =
					u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens
			}
		}
	case "message_stop":
		a.stopped = true
	case "error":
		e := &model.APIError{Provider: model.ProviderAnthropic, Model: c.Name(), Status: 500, Type: "api_error", KeySource: c.Config().KeySource()}
		if ev.Error != nil {
			e.Status, e.Type, e.Message = StatusOf(ev.Error.Type), ev.Error.Type, c.Redact(ev.Error.Message)
		}
		e.Message += " (error event in the stream)"
		return e
	}
	return nil
}

// finishReasons maps stop_reason to the chat API's finish_reason.
var finishReasons = map[string]string{"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
	"refusal": "content_filter", "tool_use": "tool_calls", "pause_turn": "length", "model_context_window_exceeded": "length"}

func (a *assembly) response() model.Response {
	fr, ok := finishReasons[a.stop]
	if !ok {
		fr = a.stop
	}
	in := a.usage.InputTokens + a.usage.CacheCreationInputTokens + a.usage.CacheReadInputTokens
	return model.Response{
		Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a.text.String(),
			ReasoningContent: a.thinking.String()},
		FinishReason: fr,
		Usage: openai.Usage{PromptTokens: in, CompletionTokens: a.usage.OutputTokens, TotalTokens: in + a.usage.OutputTokens,
			PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: a.usage.CacheReadInputTokens}},
	}
}

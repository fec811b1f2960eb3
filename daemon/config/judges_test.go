package config

import (
	"errors"
	"slices"
	"testing"
)

func TestJudges(t *testing.T) {
	c := Default()
	c.DataDir, c.Socket = "/tmp/d", "/tmp/d/s.sock"
	if err := c.Parse([]byte("judges:\n  - model: judge-a\n    seeds: [1, 2]\n  - model: judge-b\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Judges[1].Seeds, DefaultJudgeSeeds) || !c.JudgeModels()["judge-a"] || len(c.JudgeModels()) != 2 {
		t.Errorf("judges %+v", c.Judges)
	}
	for doc, field := range map[string]string{
		"judges:\n  - model: ''\n":                   "judges[0].model",
		"judges:\n  - model: a\n  - model: a\n":      "judges[1].model",
		"judges:\n  - model: a\n    seeds: [4, 4]\n": "judges[0].seeds",
	} {
		c := Default()
		c.DataDir, c.Socket = "/tmp/d", "/tmp/d/s.sock"
		if err := c.Parse([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%q: %v, want an error on %s", doc, err, field)
		}
	}
}

// TestPaperJudgeEntriesValidate: the paper's judges as models entries
// (Responses API with xhigh effort, Anthropic with max effort) and their
// prices parse and validate; on e9e71d1 provider, reasoning_effort and
// prices were unknown keys.
func TestPaperJudgeEntriesValidate(t *testing.T) {
	c := Default()
	c.Socket, c.DataDir = "/tmp/x.sock", "/tmp/x"
	doc := "models:\n" +
		"  gpt-judge: {provider: openai-responses, base_url: https://api.openai.com/v1, model: gpt-5.5, reasoning_effort: xhigh, background: true}\n" +
		"  claude-judge: {provider: anthropic, base_url: https://api.anthropic.com, model: claude-opus-4-8, reasoning_effort: max, max_tokens: 32768}\n" +
		"judges: [{model: gpt-judge}, {model: claude-judge}]\n" +
		"prices: {gpt-judge: {input_per_mtok: 5, output_per_mtok: 30}, claude-judge: {input_per_mtok: 5, output_per_mtok: 25}}\n"
	if err := c.Parse([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.Models["gpt-judge"].ProviderName(); got != "openai-responses" {
		t.Errorf("provider %q", got)
	}
	if c.Prices["claude-judge"].OutputPerMTok != 25 {
		t.Errorf("prices %+v", c.Prices)
	}
}

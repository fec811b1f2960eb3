package chat

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat/jinja"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

// TestGoldenMaskTokens tokenizes the goldens of the templates that use the Qwen3 tokenizer
// (the one at hand) and checks that the masked tokens are exactly each assistant span's
// text: nothing outside a span, and all of it but a whitespace-only head that a straddling
// token ("\n" merged with the content's leading spaces) carries into the turn header.
func TestGoldenMaskTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the Qwen3 tokenizer")
	}
	tok, err := tokenizer.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	manifest := map[string]templateInfo{}
	for _, name := range []string{"qwen3", "qwen3_hub", "qwen3_training", "qwen3_instruct_2507", "qwen3_coder", "qwen2_5"} {
		manifest[name] = templateInfo{Special: map[string]string{"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}}
	}
	cache := map[string]*Template{}
	n := 0
	for name := range manifest {
		tm := goldenTemplate(t, cache, name, manifest)
		for _, c := range readJSONL[goldenConv](t, "testdata/conversations.jsonl") {
			var tools jinja.Value
			if c.Tools != nil {
				tools = JinjaValue(*c.Tools)
			}
			opt := Options{AddGenerationPrompt: c.AddGenerationPrompt, Kwargs: map[string]jinja.Value{}}
			for k, v := range c.Kwargs {
				opt.Kwargs[k] = JinjaValue(v)
			}
			r, err := tm.RenderValues(RawMessages(c.Messages), tools, opt)
			if err != nil {
				continue
			}
			e := Encode(tok, r)
			_, ends := tok.EncodeOffsets(r.Text)
			var masked strings.Builder
			start := 0
			for k, end := range ends {
				if e.AssistantMask[k] == 1 {
					masked.WriteString(r.Text[start:end])
				}
				start = end
			}
			var want strings.Builder
			for _, s := range r.Assistant {
				want.WriteString(r.Text[s[0]:s[1]])
			}
			if got := masked.String(); got != want.String() && !trimmedHeads(got, r) {
				t.Errorf("%s/%s: masked tokens %q\nspans %q", name, c.ID, got, want.String())
			}
			n++
		}
	}
	if n < 60 {
		t.Errorf("only %d renderings checked", n)
	}
}

// trimmedHeads reports whether masked is the spans' text with only whitespace missing at
// the start of spans.
func trimmedHeads(masked string, r *Rendered) bool {
	for _, s := range r.Assistant {
		span := r.Text[s[0]:s[1]]
		trimmed := strings.TrimLeft(span, " \t\n")
		found := false
		for cut := len(span) - len(trimmed); cut >= 0 && !found; cut-- {
			if strings.HasPrefix(masked, span[cut:]) {
				masked, found = masked[len(span)-cut:], true
			}
		}
		if !found {
			return false
		}
	}
	return masked == ""
}

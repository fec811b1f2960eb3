package chat

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat/jinja"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

// engineOnly returns the template with its native fast path turned off.
func engineOnly(t *Template) *Template {
	c := *t
	c.Family = Jinja
	return &c
}

// TestNativeAgreesWithEngine holds the two native renderers to the engine: same text and
// same assistant spans for every fixture conversation the engine can mask. The native
// renderers are only a fast path while this holds.
func TestNativeAgreesWithEngine(t *testing.T) {
	q3, err := LoadTemplate(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	q25src, err := os.ReadFile("testdata/qwen25_chat_template.jinja")
	if err != nil {
		t.Fatal(err)
	}
	q25, err := Identify(string(q25src))
	if err != nil {
		t.Fatal(err)
	}
	if q3.Family != Qwen3 || q25.Family != Qwen25 {
		t.Fatalf("families %s, %s", q3.Family, q25.Family)
	}
	compared, unmasked := 0, 0
	for _, tm := range []*Template{q3, q25} {
		eng := engineOnly(tm)
		for i, c := range readChatCases(t) {
			opt := Options{AddGenerationPrompt: c.AddGenerationPrompt, EnableThinking: c.EnableThinking}
			nat, err := tm.Render(c.Messages, c.Tools, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := eng.Render(c.Messages, c.Tools, opt)
			if got == nil {
				t.Fatalf("%s case %d: %v", tm.Family, i, err)
			}
			if got.Text != nat.Text {
				t.Errorf("%s case %d text:\n engine %q\n native %q", tm.Family, i, got.Text, nat.Text)
				continue
			}
			if errors.Is(err, ErrNoMask) {
				unmasked++
				continue
			}
			compared++
			if !subsetSpans(got.Assistant, nat.Assistant) || len(got.Assistant) == 0 && len(nat.Assistant) > 0 && !multiQuery(c.Messages) {
				t.Errorf("%s case %d spans: engine %v, native %v", tm.Family, i, got.Assistant, nat.Assistant)
			}
			if !multiQuery(c.Messages) && !reflect.DeepEqual(got.Assistant, nat.Assistant) {
				t.Errorf("%s case %d spans: engine %v, native %v", tm.Family, i, got.Assistant, nat.Assistant)
			}
		}
	}
	t.Logf("%d renderings agree, %d not maskable by prefixes (text agrees)", compared, unmasked)
	if compared < 40 {
		t.Errorf("only %d masked renderings compared", compared)
	}
}

// subsetSpans reports whether every engine span is one of the native spans: for templates
// that render earlier queries' turns differently once a new query follows, the engine masks
// only the last query's turns (the SFT builder renders each query segment on its own), the
// native renderers every turn.
func subsetSpans(engine, native [][2]int) bool {
	for _, e := range engine {
		found := false
		for _, n := range native {
			found = found || e == n
		}
		if !found {
			return false
		}
	}
	return true
}

func multiQuery(msgs []Message) bool {
	q := 0
	for i, m := range msgs {
		if m.Role == "user" && LastQueryIndex(msgs[:i+1]) == i {
			q++
		}
	}
	return q > 1
}

// TestEngineMaskFixture checks the engine's prefix-derived masks against the Qwen3
// fixture's masks (token level, Python-rendered text).
func TestEngineMaskFixture(t *testing.T) {
	tok, err := tokenizer.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	q3, err := LoadTemplate(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	eng := engineOnly(q3)
	n := 0
	for i, c := range readChatCases(t) {
		r, err := eng.Render(c.Messages, c.Tools, Options{AddGenerationPrompt: c.AddGenerationPrompt, EnableThinking: c.EnableThinking})
		if errors.Is(err, ErrNoMask) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != c.Text {
			t.Errorf("case %d text differs", i)
			continue
		}
		e := Encode(tok, r)
		if !reflect.DeepEqual(e.IDs, c.IDs) {
			t.Errorf("case %d: ids differ", i)
			continue
		}
		if !multiQuery(c.Messages) && !reflect.DeepEqual(e.AssistantMask, c.AssistantMask) {
			t.Errorf("case %d: mask differs", i)
		}
		for k, m := range e.AssistantMask {
			if m == 1 && c.AssistantMask[k] != 1 {
				t.Errorf("case %d: token %d masked, not an assistant token", i, k)
				break
			}
		}
		n++
	}
	if n < 20 {
		t.Errorf("only %d cases masked", n)
	}
}

// TestGenerationSpansMatchPrefixes compares, for the templates trl ships with a
// {% generation %} twin, the spans the engine derives from prefixes of the original with
// the spans the twin marks, wherever the two render the same text.
func TestGenerationSpansMatchPrefixes(t *testing.T) {
	convs := readJSONL[goldenConv](t, "testdata/conversations.jsonl")
	same := 0
	for orig, twin := range map[string]string{"qwen3": "qwen3_training", "qwen3_6": "qwen3_6_training"} {
		a, b := loadTestTemplate(t, orig), loadTestTemplate(t, twin)
		for _, c := range convs {
			var tools jinja.Value
			if c.Tools != nil {
				tools = JinjaValue(*c.Tools)
			}
			opt := Options{AddGenerationPrompt: c.AddGenerationPrompt, Kwargs: map[string]jinja.Value{}}
			for k, v := range c.Kwargs {
				opt.Kwargs[k] = JinjaValue(v)
			}
			ra, errA := a.RenderValues(RawMessages(c.Messages), tools, opt)
			rb, errB := b.RenderValues(RawMessages(c.Messages), tools, opt)
			if errA != nil || errB != nil || ra.Text != rb.Text {
				continue
			}
			same++
			if !spansAgree(ra.Text, ra.Assistant, rb.Assistant) {
				t.Errorf("%s/%s: prefix spans %v, generation spans %v", orig, c.ID, ra.Assistant, rb.Assistant)
			}
		}
	}
	if same < 3 {
		t.Errorf("only %d conversations render the same with both twins", same)
	}
	t.Logf("%d conversations compared", same)
}

// spansAgree allows the two conventions to differ where trl's blocks are wider: they start
// before the "<think>\n" that Qwen3.6's generation prompt already holds (the reference
// supervises from after it) and end after the newline that follows <|im_end|>.
func spansAgree(text string, prefix, gen [][2]int) bool {
	if len(prefix) != len(gen) {
		return false
	}
	for i, p := range prefix {
		g := gen[i]
		if g[0] > p[0] || p[1] > g[1] {
			return false
		}
		if head := text[g[0]:p[0]]; head != "" && head != "<think>\n" {
			return false
		}
		if strings.TrimSpace(text[p[1]:g[1]]) != "" {
			return false
		}
	}
	return true
}

func loadTestTemplate(t testing.TB, name string) *Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata/templates", name+".jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Identify(string(src))
	if err != nil {
		t.Fatal(err)
	}
	tm.special = map[string]jinja.Value{"eos_token": "<|im_end|>"}
	return tm
}

// TestLoadTemplate checks transformers' loading rules: chat_template.jinja overrides the
// config's template, a named list picks tool_use with tools and default without, and a
// null special token is undefined, not "None".
func TestLoadTemplate(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"bos_token": null, "eos_token": {"content": "</s>", "lstrip": false}, "pad_token": "<pad>",
	  "chat_template": [{"name": "default", "template": "D{{ bos_token is defined }}{{ eos_token }}{{ pad_token }}"},
	                    {"name": "tool_use", "template": "T{{ tools | length }}"}]}`
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	tm, err := LoadTemplate(dir)
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "x"}}
	r, _ := tm.Render(msgs, nil, Options{})
	if r == nil || r.Text != "DFalse</s><pad>" {
		t.Errorf("default: got %+v", r)
	}
	r, _ = tm.Render(msgs, []Value{{Kind: Null}}, Options{})
	if r == nil || r.Text != "T1" {
		t.Errorf("tool_use: got %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte("J{{ messages[0].content }}\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tm, err = LoadTemplate(dir); err != nil {
		t.Fatal(err)
	}
	r, _ = tm.Render(msgs, nil, Options{})
	if r == nil || r.Text != "Jx" {
		t.Errorf("chat_template.jinja: got %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte("{% if %}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTemplate(dir); !errors.Is(err, ErrUnknownTemplate) || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("broken template: got %v", err)
	}
}

package chat

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mass-dev/mass/trainer/chat/jinja"
)

// goldenNow is the clock scripts/chat-goldens.py gives strftime_now.
var goldenNow = time.Date(2026, 3, 5, 14, 7, 9, 0, time.Local)

type goldenConv struct {
	ID                  string           `json:"id"`
	Messages            []Value          `json:"messages"`
	Tools               *Value           `json:"tools"`
	AddGenerationPrompt bool             `json:"add_generation_prompt"`
	Kwargs              map[string]Value `json:"kwargs"`
}

type golden struct {
	Template     string   `json:"template"`
	Conversation string   `json:"conversation"`
	Text         *string  `json:"text"`
	Error        string   `json:"error"`
	Generation   [][2]int `json:"generation"`
	Mask         [][2]int `json:"mask"`
	MaskError    string   `json:"mask_error"`
}

type templateInfo struct {
	Source  string            `json:"source"`
	License string            `json:"license"`
	Special map[string]string `json:"special"`
}

func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var x T
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, x)
	}
	return out
}

func goldenVars(info templateInfo, c goldenConv) map[string]jinja.Value {
	vars := map[string]jinja.Value{
		"messages":              RawMessages(c.Messages),
		"tools":                 nil,
		"documents":             nil,
		"add_generation_prompt": c.AddGenerationPrompt,
		"strftime_now":          jinja.StrftimeFunc(func() time.Time { return goldenNow }),
	}
	if c.Tools != nil {
		vars["tools"] = JinjaValue(*c.Tools)
	}
	for k, v := range info.Special {
		vars[k] = v
	}
	for k, v := range c.Kwargs {
		vars[k] = JinjaValue(v)
	}
	return vars
}

// TestGoldens renders every template x conversation and compares with what Python's jinja2
// rendered in transformers' environment (scripts/chat-goldens.py): byte-exact text, the
// {% generation %} spans, and a refusal wherever Python raised.
func TestGoldens(t *testing.T) {
	var manifest map[string]templateInfo
	b, err := os.ReadFile("testdata/templates.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatal(err)
	}
	convs := map[string]goldenConv{}
	for _, c := range readJSONL[goldenConv](t, "testdata/conversations.jsonl") {
		convs[c.ID] = c
	}
	compiled := map[string]*jinja.Template{}
	tmpls := map[string]*Template{}
	goldens := readJSONL[golden](t, "testdata/goldens.jsonl")
	if len(goldens) < len(manifest)*len(convs) {
		t.Fatalf("%d goldens for %d templates x %d conversations", len(goldens), len(manifest), len(convs))
	}
	for _, g := range goldens {
		tm, ok := compiled[g.Template]
		if !ok {
			src, err := os.ReadFile(filepath.Join("testdata/templates", g.Template+".jinja"))
			if err != nil {
				t.Fatal(err)
			}
			if tm, err = jinja.Compile(string(src)); err != nil {
				t.Fatalf("%s: %v", g.Template, err)
			}
			compiled[g.Template] = tm
		}
		res, err := tm.Render(goldenVars(manifest[g.Template], convs[g.Conversation]))
		name := g.Template + "/" + g.Conversation
		switch {
		case g.Text == nil && err == nil:
			t.Errorf("%s: rendered, but Python raised %s", name, g.Error)
		case g.Text == nil:
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case res.Text != *g.Text:
			t.Errorf("%s text:\n got %q\nwant %q", name, res.Text, *g.Text)
		case !reflect.DeepEqual(res.Generation, g.Generation) && (len(res.Generation) > 0 || len(g.Generation) > 0):
			t.Errorf("%s generation spans: got %v, want %v", name, res.Generation, g.Generation)
		default:
			checkGoldenMask(t, name, goldenTemplate(t, tmpls, g.Template, manifest), convs[g.Conversation], g)
		}
	}
}

// goldenTemplate builds the chat Template of a testdata template as LoadTemplate would.
func goldenTemplate(t *testing.T, cache map[string]*Template, name string, manifest map[string]templateInfo) *Template {
	if tm, ok := cache[name]; ok {
		return tm
	}
	src, err := os.ReadFile(filepath.Join("testdata/templates", name+".jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Identify(string(src))
	if err != nil {
		t.Fatal(err)
	}
	tm.Family = Jinja
	tm.special = map[string]jinja.Value{}
	for k, v := range manifest[name].Special {
		tm.special[k] = v
	}
	tm.splits = tm.probeSplits()
	cache[name] = tm
	return tm
}

// checkGoldenMask compares the assistant spans with the goldens: the {% generation %}
// spans where the template has them, else the spans Python derived from prefix renderings
// (or its refusal).
func checkGoldenMask(t *testing.T, name string, tm *Template, c goldenConv, g golden) {
	var tools jinja.Value
	if c.Tools != nil {
		tools = JinjaValue(*c.Tools)
	}
	opt := Options{AddGenerationPrompt: c.AddGenerationPrompt, Kwargs: map[string]jinja.Value{"strftime_now": jinja.StrftimeFunc(func() time.Time { return goldenNow })}}
	for k, v := range c.Kwargs {
		opt.Kwargs[k] = JinjaValue(v)
	}
	r, err := tm.RenderValues(RawMessages(c.Messages), tools, opt)
	want := g.Mask
	if len(g.Generation) > 0 {
		want = g.Generation
	}
	switch {
	case r == nil:
		t.Errorf("%s: %v", name, err)
	case g.MaskError != "" && err == nil:
		t.Errorf("%s: masked %v, but Python refused: %s", name, r.Assistant, g.MaskError)
	case g.MaskError != "":
	case err != nil:
		t.Errorf("%s: %v", name, err)
	case !reflect.DeepEqual(r.Assistant, want) && (len(r.Assistant) > 0 || len(want) > 0):
		t.Errorf("%s mask: got %v, want %v", name, r.Assistant, want)
	}
}

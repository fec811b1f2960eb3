package jinja_test

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/chat/jinja"
)

type probe struct {
	ID       string                `json:"id"`
	Template string                `json:"template"`
	Vars     map[string]chat.Value `json:"vars"`
}

type probeGolden struct {
	ID         string   `json:"id"`
	Text       *string  `json:"text"`
	Error      string   `json:"error"`
	Generation [][2]int `json:"generation"`
}

func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var x T
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// TestProbes checks the environment facts one at a time against Python's jinja2 in
// transformers' environment (../testdata/probes_golden.jsonl, by scripts/chat-goldens.py):
// how values print, tojson and its options, whitespace control, CRLF and the final
// newline, loops, scoping, macros, filters, string methods, operators, tests, generation
// spans, and every error Python raises.
func TestProbes(t *testing.T) {
	probes := readLines[probe](t, "../testdata/probes.jsonl")
	goldens := readLines[probeGolden](t, "../testdata/probes_golden.jsonl")
	if len(probes) != len(goldens) || len(probes) < 30 {
		t.Fatalf("%d probes, %d goldens", len(probes), len(goldens))
	}
	for i, p := range probes {
		g := goldens[i]
		vars := map[string]jinja.Value{}
		for k, v := range p.Vars {
			vars[k] = chat.JinjaValue(v)
		}
		var res *jinja.Result
		tm, err := jinja.Compile(p.Template)
		if err == nil {
			res, err = tm.Render(vars)
		}
		switch {
		case g.Text == nil && err == nil:
			t.Errorf("%s: rendered %q, but Python raised %s", p.ID, res.Text, g.Error)
		case g.Text == nil:
			t.Logf("%s: refused (%v); Python: %s", p.ID, err, g.Error)
		case err != nil:
			t.Errorf("%s: %v", p.ID, err)
		case res.Text != *g.Text:
			t.Errorf("%s:\n got %q\nwant %q", p.ID, res.Text, *g.Text)
		case len(g.Generation) > 0 && !reflect.DeepEqual(res.Generation, g.Generation):
			t.Errorf("%s generation: got %v, want %v", p.ID, res.Generation, g.Generation)
		}
	}
}

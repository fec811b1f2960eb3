package jinja_test

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

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
		// scripts/chat-goldens.py gives strftime_now a fixed clock.
		vars := map[string]jinja.Value{"strftime_now": jinja.StrftimeFunc(func() time.Time { return time.Date(2026, 3, 5, 14, 7, 9, 0, time.Local) })}
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

// TestStrftimeNowLocal: strftime_now reads the local clock, as transformers'
// datetime.now() does.
func TestStrftimeNowLocal(t *testing.T) {
	tm, err := jinja.Compile(`{{ strftime_now("%Y-%m-%d %H:%M %Z") }}`)
	if err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		before := time.Now().Format("2006-01-02 15:04 MST")
		res, err := tm.Render(nil)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now().Format("2006-01-02 15:04 MST")
		if before == after { // not across a minute boundary
			if res.Text != before {
				t.Errorf("got %q, want %q", res.Text, before)
			}
			return
		}
		if try > 3 {
			t.Fatal("the minute kept changing")
		}
	}
}

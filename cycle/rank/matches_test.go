package rank

import (
	"bytes"
	"strings"
	"testing"
)

func TestReadMatches(t *testing.T) {
	in := `{"a":"e1","b":"e2","winner":"e1","rationale":"tests pass","model":"m","seed":42,"metrics":{"x":1}}
{"a":"e1","b":"e3","winner":"B"}

{"a":"e2","b":"e3","winner":"tie"}
{"a":"e3","b":"e1","winner":"A"}
{"a":"e2","b":"e1","winner":"e1"}
{"a":"e2","b":"e3","winner":"error"}
{"a":"e2","b":"e3","winner":null}
{"a":"e2","b":"e3"}
{"a":"e2","b":"e3","winner":"e9"}
{"a":"e2","b":"e3","winner":3}
`
	ms, excluded, err := ReadMatches(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{{"e1", "e2", AWins}, {"e1", "e3", BWins}, {"e2", "e3", Tie}, {"e3", "e1", AWins}, {"e2", "e1", BWins}}
	if len(ms) != len(want) {
		t.Fatalf("matches %v, want %v", ms, want)
	}
	for i := range want {
		if ms[i] != want[i] {
			t.Errorf("match %d: %v, want %v", i+1, ms[i], want[i])
		}
	}
	if excluded != 5 {
		t.Errorf("excluded %d, want 5", excluded)
	}
}

// TestInvalidIsExcludedNotTied: "error" verdicts leave the fit as if the
// rows were absent, and differ from counting them as ties (the reference's
// behaviour).
func TestInvalidIsExcludedNotTied(t *testing.T) {
	valid := `{"a":"x","b":"y","winner":"x"}
{"a":"y","b":"z","winner":"y"}
{"a":"x","b":"z","winner":"x"}
`
	bad := `{"a":"x","b":"y","winner":"error"}
{"a":"x","b":"y","winner":"error"}
`
	fit := func(s string) ([]Score, int) {
		ms, ex, err := ReadMatches(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Fit(nil, ms, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return sc, ex
	}
	clean, ex0 := fit(valid)
	with, ex := fit(valid + bad)
	tied, _ := fit(valid + strings.ReplaceAll(bad, "error", "tie"))
	if ex0 != 0 || ex != 2 {
		t.Errorf("excluded %d and %d, want 0 and 2", ex0, ex)
	}
	for i := range clean {
		if clean[i] != with[i] {
			t.Errorf("with invalid rows %+v, without %+v", with[i], clean[i])
		}
	}
	if tied[0].Score == clean[0].Score {
		t.Error("counting the invalid rows as ties did not change the fit; the test cannot tell them apart")
	}
}

func TestReadMatchesErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[1,2]\n", "matches line 1: not a JSON object"},
		{`{"a":"x","b":"y","winner":"x"}` + "\n{\"a\":\"x\"\n", "matches line 2: parse"},
		{`{"b":"y","winner":"y"}`, `line 1: missing "a" or "b"`},
		{`{"a":"","b":"y","winner":"y"}`, `empty "a" or "b"`},
		{`{"a":"y","b":"y","winner":"y"}`, "compared with itself"},
		{`{"a":1,"b":"y","winner":"y"}`, "parse"},
		{`{"a":"x","b":"y","winner":"x"}` + "\n\n" + strings.Repeat(" ", MaxMatchLine+1), "line 3: longer than"},
	} {
		_, _, err := ReadMatches(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func TestParseWinnerIDsFirst(t *testing.T) {
	// An episode named "B" in position a: its id wins over the letter.
	if o, ok := ParseWinner("B", "x", "B"); !ok || o != AWins {
		t.Errorf("winner B with a=B: %v %v, want a", o, ok)
	}
	if _, ok := ParseWinner("x", "y", "TIE"); ok {
		t.Error(`"TIE" accepted; only "tie" is a tie`)
	}
}

func FuzzReadMatches(f *testing.F) {
	f.Add([]byte(`{"a":"e1","b":"e2","winner":"e1"}` + "\n" + `{"a":"e1","b":"e2","winner":"error"}`))
	f.Add([]byte(`{"a":"B","b":"A","winner":"A"}` + "\n\n" + `{"a":"x","b":"y","winner":"tie","metrics":{}}`))
	f.Add([]byte(`{"a":"x","b":"y","winner":null}`))
	f.Add([]byte("{\"a\":\"\\u0000\",\"b\":\"y\"}\n[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, excluded, err := ReadMatches(bytes.NewReader(data))
		if err != nil {
			return
		}
		if excluded < 0 {
			t.Fatalf("excluded %d", excluded)
		}
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(ms)+excluded != lines {
			t.Fatalf("%d matches + %d excluded from %d non-blank lines", len(ms), excluded, lines)
		}
		for _, m := range ms {
			if m.A == "" || m.B == "" || m.A == m.B || m.Winner < AWins || m.Winner > Tie {
				t.Fatalf("bad match %+v", m)
			}
		}
		if _, err := Fit(nil, ms, Options{Iterations: 3}); err != nil {
			t.Fatalf("fit of parsed matches: %v", err)
		}
	})
}

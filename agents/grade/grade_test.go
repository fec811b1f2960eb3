package grade

import (
	"errors"
	"strings"
	"testing"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		out    string
		passed bool
		score  float64
		err    bool
	}{
		{`{"passed": true, "score": 0.93}`, true, 0.93, false},
		{"log\n{\"passed\": false, \"score\": 0.2}\nbye\n", false, 0.2, false},
		{"{\"passed\": true}\n{\"passed\": false}\n", false, -1, false},
		{`{"passed": "yes"}`, false, -1, true},
		{"no json here", false, -1, true},
		{`{"score": 1}`, false, -1, true},
		{`{"passed": true, "score": "high"}`, true, -1, false},
	}
	for _, tc := range tests {
		v, err := ParseVerdict([]byte(tc.out))
		if (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrNoVerdict)) {
			t.Errorf("%q: err %v", tc.out, err)
			continue
		}
		if v.Passed != tc.passed || (tc.score >= 0) != (v.Score != nil) || (v.Score != nil && *v.Score != tc.score) {
			t.Errorf("%q: verdict %+v", tc.out, v)
		}
	}
}

func TestFromRun(t *testing.T) {
	pass := []byte(`{"passed": true, "score": 1}`)
	if g := FromRun(Run{Exit: 0, TimedOut: false, Stdout: pass, Seconds: 1}); !g.Passed || g.Reason != "" {
		t.Errorf("passing run: %+v", g)
	}
	if g := FromRun(Run{Exit: 1, TimedOut: false, Stdout: pass, Seconds: 1}); g.Passed || g.Reason == "" {
		t.Errorf("exit 1 with a passing verdict: %+v", g)
	}
	if g := FromRun(Run{Exit: 0, TimedOut: true, Stdout: pass, Seconds: 1}); g.Passed {
		t.Errorf("timed out: %+v", g)
	}
	if g := FromRun(Run{Stdout: []byte("{}"), Seconds: 1}); g.Passed {
		t.Errorf("empty verdict: %+v", g)
	}
	big := make([]byte, 3*MaxOutputBytes)
	if g := FromRun(Run{Exit: 0, TimedOut: false, Stdout: big, Seconds: 1}); len(g.Output) > MaxOutputBytes+64 {
		t.Errorf("output not capped: %d bytes", len(g.Output))
	}
}

// TestFromRunTruncatedFails is the filler forgery: a program the grader
// ran prints a forged verdict, then enough filler that the runtime's cap
// cuts the grader's real verdict off; the last JSON line left says passed.
func TestFromRunTruncatedFails(t *testing.T) {
	out := append([]byte("{\"passed\": true, \"score\": 1}\n"), make([]byte, 1<<20)...)
	for i := len(out) - 1<<20; i < len(out); i++ {
		out[i] = 'x'
	}
	g := FromRun(Run{Stdout: out[:1<<20], Truncated: true, Seconds: 1})
	if g.Passed || g.Score != nil || !g.Truncated || !strings.Contains(g.Reason, "output cap") {
		t.Errorf("cut output with a forged verdict: %+v", g.Reason)
	}
}

func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"passed": true, "score": 1}`, "x\n{\"passed\":false}", "{", `{"passed":true,"score":1e999}`, "\n\n{}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseVerdict(b)
		if err != nil && v.Passed {
			t.Fatalf("error %v with a passing verdict", err)
		}
		g := FromRun(Run{Exit: 0, TimedOut: false, Stdout: b, Seconds: 0})
		if g.Passed != (err == nil && v.Passed) {
			t.Fatalf("grade %+v disagrees with verdict %+v, %v", g, v, err)
		}
		if len(g.Output) > MaxOutputBytes+64 {
			t.Fatalf("output %d bytes", len(g.Output))
		}
	})
}

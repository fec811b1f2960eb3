package cli

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/probe"
	"github.com/mass-dev/mass/sandbox/probe/check"
)

// TestPolicyTableWraps: `sandbox policy` on an 80-column terminal wraps
// its ~300-column table: no line passes 80 columns, every field and every
// word of its meaning is still there; at width 0 (--wide, a pipe) each
// field keeps one line.
func TestPolicyTableWraps(t *testing.T) {
	rep := sandbox.Report{Policy: sandbox.DefaultPolicy(), Engine: "test"}
	fields := probe.DescribePolicy(rep.Policy)
	var wide, narrow bytes.Buffer
	if err := writePolicy(&wide, rep, 0); err != nil {
		t.Fatal(err)
	}
	if err := writePolicy(&narrow, rep, 80); err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, l := range strings.Split(wide.String(), "\n") {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	if longest <= 80 {
		t.Fatalf("the wide table is only %d columns: nothing to wrap", longest)
	}
	for _, l := range strings.Split(narrow.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 && !strings.HasPrefix(l, "runtime:") && !strings.HasPrefix(l, "WARNING") {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	words := strings.Fields(narrow.String())
	text := " " + strings.Join(words, " ") + " "
	for _, f := range fields {
		for _, w := range strings.Fields(f.Doc) {
			if utf8.RuneCountInString(w) <= 20 && !strings.Contains(text, w) { // longer words are cut mid-word
				t.Errorf("wrapped table lost %q of %s", w, f.Name)
			}
		}
		if !strings.Contains(narrow.String(), f.Name) {
			t.Errorf("wrapped table lost field %s", f.Name)
		}
	}
	if got, want := strings.Count(wide.String(), "\n"), len(fields)+1; got < want {
		t.Errorf("wide table has %d lines, want at least %d", got, want)
	}
	t.Logf("%d columns wrapped to 80:\n%s", longest, narrow.String())
}

func TestVerifyTableWraps(t *testing.T) {
	rep := probe.Report{Runtime: "runc", Probes: []check.Result{
		{Name: "no-network", OK: true, Expected: strings.Repeat("no route to any address outside the box ", 4), Observed: "connect: network is unreachable"},
		{Name: "readonly-root", OK: false, Expected: "EROFS on every write below /", Observed: strings.Repeat("x", 150)},
	}, Passed: 1, Failed: 1}
	var b bytes.Buffer
	if err := writeVerify(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(b.String(), "FAIL") || !strings.Contains(b.String(), "1 passed, 1 failed") || strings.Count(b.String(), "x") < 150 {
		t.Errorf("wrapped report lost content:\n%s", b.String())
	}
}

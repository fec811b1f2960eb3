package search

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/workflow"
)

func TestNormalizeDesign(t *testing.T) {
	h := workflow.Header
	after := "\n\nUse uv for all Python workflows—run code with uv run. Save logs.\n"
	long := strings.Repeat("x", 100)
	cases := []struct{ name, in, want string }{
		{"plain", "  " + h + "\n[a]\n", h + "\n[a]"},
		{"copied tail", h + "\n[a]\n\nUse uv for all Python workflows—run code with uv run. Save logs.\nmore", h + "\n[a]"},
		// No copied tail: an end marker in the last 30% cuts ...
		{"late marker", h + long + " Use uv for all Python workflows", h + long},
		// ... one earlier is an instruction and stays.
		{"early marker", h + " Use uv for all Python workflows " + long, h + " Use uv for all Python workflows " + long},
	}
	for _, c := range cases {
		got, err := NormalizeDesign(c.in, after)
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := NormalizeDesign("Here is the design: "+h, after); err != ErrNoMarker {
		t.Errorf("no marker first: %v", err)
	}
}

func FuzzNormalizeDesign(f *testing.F) {
	f.Add(workflow.Header+"\n[]\nUse uv for all Python workflows", "Use uv for all Python workflows now")
	f.Add("x", "")
	f.Add(workflow.Header+"é\u00a0", "\u00a0é")
	f.Fuzz(func(t *testing.T, text, after string) {
		got, err := NormalizeDesign(text, after)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, workflow.Header) || len(got) > len(text) {
			t.Fatalf("normalised %q to %q", text, got)
		}
		again, err := NormalizeDesign(got, after)
		if err != nil || len(again) > len(got) {
			t.Fatalf("not stable: %q -> %q (%v)", got, again, err)
		}
	})
}

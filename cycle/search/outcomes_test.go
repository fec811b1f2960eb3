package search

import (
	"strings"
	"testing"
)

func TestDeliverablesWarning(t *testing.T) {
	yes, no := true, false
	v := func(slot string, out *bool, success bool) VersionOutcome {
		return VersionOutcome{Slot: slot, OutputsPresent: out, Success: success}
	}
	for _, c := range []struct {
		name string
		vs   []VersionOutcome
		want string
	}{
		{"both missing", []VersionOutcome{v("reference", &no, false), v("v0", &yes, true), v("v2", &no, false)}, "required outputs"},
		{"both failed", []VersionOutcome{v("reference", &yes, false), v("v2", &yes, false)}, "neither the reference nor the champion v2 succeeded"},
		{"champion delivered", []VersionOutcome{v("reference", &no, false), v("v2", &yes, true)}, ""},
		{"reference delivered", []VersionOutcome{v("reference", &yes, true), v("v2", &no, false)}, ""},
		{"not known", []VersionOutcome{v("reference", nil, false), v("v2", nil, false)}, ""},
		{"no champion episode", []VersionOutcome{v("reference", &no, false)}, ""},
	} {
		got := DeliverablesWarning(c.vs, 2)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

package search

import (
	"strings"
	"testing"
)

func TestDeliverablesWarning(t *testing.T) {
	yes, no := true, false
	v := func(slot string, out, grade *bool) VersionOutcome {
		return VersionOutcome{Slot: slot, OutputsPresent: out, GradePassed: grade}
	}
	for _, c := range []struct {
		name string
		vs   []VersionOutcome
		want string
	}{
		{"both missing", []VersionOutcome{v("reference", &no, nil), v("v0", &yes, &yes), v("v2", &no, &no)}, "required outputs"},
		{"both graded failed", []VersionOutcome{v("reference", &yes, &no), v("v2", &yes, &no)}, "passed the task's grader"},
		{"champion delivered", []VersionOutcome{v("reference", &no, &no), v("v2", &yes, &yes)}, ""},
		{"reference delivered", []VersionOutcome{v("reference", &yes, &yes), v("v2", &no, &no)}, ""},
		{"not known", []VersionOutcome{v("reference", nil, nil), v("v2", nil, nil)}, ""},
		{"no champion episode", []VersionOutcome{v("reference", &no, &no)}, ""},
	} {
		got := DeliverablesWarning(c.vs, 2)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

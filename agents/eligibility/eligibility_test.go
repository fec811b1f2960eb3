package eligibility

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	good := Episode{ID: "e", OutputsPresent: true, GraderDeclared: true, GraderPassed: true, Completed: true, GuardsChecked: true}
	if r := Check(good, Dataset{}); r != "" {
		t.Fatalf("clean episode excluded: %s", r)
	}
	tests := []struct {
		name string
		mod  func(*Episode)
		d    Dataset
		want string
	}{
		{"grader failed", func(e *Episode) { e.GraderPassed = false }, Dataset{}, "grader"},
		{"no grader needs no pass", func(e *Episode) { e.GraderDeclared, e.GraderPassed = false, false }, Dataset{}, ""},
		{"missing output", func(e *Episode) { e.OutputsPresent = false }, Dataset{}, "required output"},
		{"violation", func(e *Episode) { e.Violations = 1 }, Dataset{}, "violation"},
		{"shadow", func(e *Episode) { e.ShadowCopies = 2 }, Dataset{}, "shadow"},
		{"dry run into real", func(e *Episode) { e.DryRun = true }, Dataset{}, "dry-run"},
		{"dry run into dry run", func(e *Episode) { e.DryRun = true }, Dataset{DryRun: true}, ""},
		{"real into dry run", func(*Episode) {}, Dataset{DryRun: true}, "real-model"},
		{"unfinished", func(e *Episode) { e.Completed = false }, Dataset{}, "complete"},
		{"old record", func(e *Episode) { e.GuardsChecked = false }, Dataset{}, "guard"},
	}
	for _, tc := range tests {
		e := good
		tc.mod(&e)
		r := Check(e, tc.d)
		if (tc.want == "") != (r == "") || !strings.Contains(r, tc.want) {
			t.Errorf("%s: reason %q, want %q", tc.name, r, tc.want)
		}
	}
}

func FuzzFromDir(f *testing.F) {
	f.Add([]byte(`{"episode_id":"e","exit":"completed","outputs_present":true,"grade":{"passed":true},"guards":{"integrity_checked":true}}`))
	f.Add([]byte(`{"grade":null,"guards":{"shadow_copies":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		_ = os.WriteFile(filepath.Join(dir, "run_status.json"), b, 0o644)
		_ = os.WriteFile(filepath.Join(dir, "episode.json"), []byte(`{"graded":true}`), 0o644)
		e, err := FromDir(dir)
		if err == nil && Check(e, Dataset{}) == "" && (!e.GraderPassed || !e.OutputsPresent || !e.Completed) {
			t.Fatalf("eligible without passing: %+v", e)
		}
	})
}

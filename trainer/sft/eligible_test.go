package sft

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/eligibility"
)

// TestBuildEligibility builds from a clean episode, one whose grader
// failed, one with a shadow copy and a dry run: only the clean one trains
// the default dataset, each exclusion names its reason, and a second build
// into the same directory needs Force.
func TestBuildEligibility(t *testing.T) {
	root := t.TempDir()
	statuses := map[string]string{
		"ep-clean":  "",
		"ep-failed": `{"exit":"completed","outputs_present":true,"grade":{"ran":true,"passed":false},"guards":{"integrity_checked":true}}`,
		"ep-shadow": `{"exit":"completed","outputs_present":true,"guards":{"integrity_checked":true,"shadow_copies":1}}`,
		"ep-dry":    `{"exit":"completed","dry_run":true,"outputs_present":true,"guards":{"integrity_checked":true}}`,
	}
	var dirs []string
	for id, st := range statuses {
		d := filepath.Join(root, id)
		if err := WriteSyntheticEpisode(d, SynthSpec{EpisodeID: id, TaskID: "task-a", Workers: 1, Turns: 2, ResponseWords: 8, ToolWords: 4, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		if st != "" {
			if err := os.WriteFile(filepath.Join(d, "run_status.json"), []byte(st), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, d)
	}
	tok, tmpl := fixtures(t)
	var heard []string
	cfg := BuildConfig{Tokenizer: tok, Template: tmpl, Window: DefaultWindowConfig(), Excluded: func(x Exclusion, _ bool) { heard = append(heard, x.Episode) }}
	out := filepath.Join(root, "ds")
	m, err := Build(context.Background(), cfg, dirs, out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Episodes != 1 || len(m.Excluded) != 3 || len(heard) != 3 {
		t.Fatalf("episodes %d, excluded %+v", m.Episodes, m.Excluded)
	}
	for _, x := range m.Excluded {
		want := map[string]string{"ep-failed": "grader", "ep-shadow": "shadow", "ep-dry": "dry-run"}[x.Episode]
		if want == "" || !strings.Contains(x.Reason, want) {
			t.Errorf("%s excluded for %q, want %q", x.Episode, x.Reason, want)
		}
	}
	if _, err := Build(context.Background(), cfg, dirs, out); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second build over the dataset: %v", err)
	}
	cfg.Force, cfg.IncludeIneligible = true, true
	if m, err = Build(context.Background(), cfg, dirs, out); err != nil || m.Episodes != 4 || len(m.IncludedIneligible) != 3 {
		t.Fatalf("forced build with ineligible: %v, %+v", err, m)
	}
	cfg.IncludeIneligible, cfg.Dataset = false, eligibility.Dataset{DryRun: true}
	if m, err = Build(context.Background(), cfg, dirs, out); err != nil || m.Episodes != 1 || !m.DryRun {
		t.Fatalf("dry-run dataset: %v, %+v", err, m)
	}
}

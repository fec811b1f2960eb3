package search

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadReferenceFolder(t *testing.T) {
	rows, err := ReadHistory("testdata/reference-search/query51_ourTeam/" + ComparisonHistoryFile)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if c := rows[0]; c.Key != "v0_vs_no_harness" || c.Winner != WinA || c.Outcome != OutcomeLoss || c.Against != AgainstReference ||
		c.Candidate != "v0" || c.Model != "Qwen/Qwen3.6-27B" || c.Baseline != "no_harness" {
		t.Errorf("row 0 %+v", c)
	}
	if rows[1].Outcome != OutcomeTie {
		t.Errorf("row 1 %+v", rows[1])
	}
}

func TestFreezeRefusesChanges(t *testing.T) {
	dir := t.TempDir()
	f := FrozenConfig{TaskID: "t", Judging: RuleReference, Judgments: 1, JudgeRetries: 2, JudgeMode: JudgeModeBundle, Model: "m"}
	if err := Freeze(dir, f); err != nil {
		t.Fatal(err)
	}
	if err := Freeze(dir, f); err != nil {
		t.Fatalf("same config refused: %v", err)
	}
	g := f
	g.Judging, g.Judgments = RulePaper, 3
	err := Freeze(dir, g)
	if !errors.Is(err, ErrConfigChanged) || !strings.Contains(err.Error(), "judging (folder reference, now paper)") || !strings.Contains(err.Error(), "judgments (folder 1, now 3)") {
		t.Fatalf("changed config: %v", err)
	}
	g = f
	g.IncludeBestDesign, g.MaxDesignChars = true, 9000
	if err := Freeze(dir, g); !errors.Is(err, ErrConfigChanged) || !strings.Contains(err.Error(), "include_best_design (folder false, now true)") ||
		!strings.Contains(err.Error(), "max_design_chars (folder 0, now 9000)") {
		t.Fatalf("changed toggles: %v", err)
	}
}

// A config written before the toggles existed adopts them and records them.
func TestFreezeAdoptsNewKeys(t *testing.T) {
	dir := t.TempDir()
	old := `{"task_id":"t","judging":"reference","judgments":1,"judge_retries":2,"judge_mode":"bundle","model":"m","judge_model":"","optimizer_model":"","seed":0}`
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	f := FrozenConfig{TaskID: "t", Judging: RuleReference, Judgments: 1, JudgeRetries: 2, JudgeMode: JudgeModeBundle, Model: "m", PromptOptions: DefaultPromptOptions()}
	if err := Freeze(dir, f); err != nil {
		t.Fatal(err)
	}
	have, ok, err := ReadFrozen(dir)
	if err != nil || !ok || have != f {
		t.Fatalf("config not rewritten with the new keys: %+v %v", have, err)
	}
	f.OmitFullResultsJSON = true
	if err := Freeze(dir, f); !errors.Is(err, ErrConfigChanged) {
		t.Fatalf("a recorded toggle changed: %v", err)
	}
}

func FuzzParseHistory(f *testing.F) {
	f.Add(`{"key":"v0_vs_no_harness","winner":"B"}` + "\n" + `{"key":"champion_v0_vs_v1","winner":"A"}`)
	f.Add(`{"key":"v1_vs_v2","winner":7,"rationale":{}}` + "\n\n{")
	f.Add("\x00\n{\"key\":\"v99999999999999999999_vs_no_harness\",\"winner\":\"B\"}")
	f.Fuzz(func(t *testing.T, s string) {
		rows, _ := ParseHistory(strings.NewReader(s))
		vs := verdicts(rows)
		for _, rule := range []string{RuleReference, RulePaper, RuleAdjacent} {
			d := Decide(rule, vs, vs)
			if d.Retained != nil && *d.Retained != d.Champion {
				t.Fatalf("%s: retained %d, champion %d", rule, *d.Retained, d.Champion)
			}
			if rule == RuleReference && d.BeatsReference != (d.Retained != nil) {
				t.Fatalf("beats_reference %v with retained %v", d.BeatsReference, d.Retained)
			}
		}
	})
}

package search

import (
	"errors"
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

package search

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/workflow"
)

func proposalJSON(design any) string {
	m := map[string]any{"improved_multi_agent_design": design, "changes_from_previous": []string{"added a verifier"},
		"why_it_should_improve": "the judge asked for checks", "evidence_used": []string{"rationale of v1"},
		"expected_impact": "more coverage", "verification_checks": []string{"report.md exists"}}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestParseProposal(t *testing.T) {
	g := workflow.Generic().Render()
	p, err := ParseProposal("Thinking...\n" + proposalJSON(g))
	if err != nil || p.Design != g || len(p.Workflow.Agents) != 3 {
		t.Fatalf("%v %v", p.Design, err)
	}
	arr := []map[string]string{{"agent_id": "a", "role": "r", "instruction": "i"}}
	if p, err := ParseProposal(proposalJSON(arr)); err != nil || p.Workflow.Agents[0].AgentID != "a" {
		t.Fatalf("array design: %v", err)
	}
	for name, in := range map[string]string{
		"no json":      "I will add a verifier.",
		"bad design":   proposalJSON("Create a team: planner, coder"),
		"missing keys": `{"improved_multi_agent_design":"x"}`,
		"empty field":  strings.Replace(proposalJSON(g), `"more coverage"`, `""`, 1),
	} {
		if _, err := ParseProposal(in); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestUnified(t *testing.T) {
	d := Unified("a", "b", "x\ny\nz\n", "x\nq\nz\n")
	if !strings.Contains(d, "-y\n+q\n") || !strings.Contains(d, " x\n") {
		t.Fatal(d)
	}
}

func TestMajority(t *testing.T) {
	cases := []struct {
		w, l, t int
		want    string
	}{{1, 0, 0, OutcomeWin}, {0, 1, 0, OutcomeLoss}, {1, 1, 0, OutcomeTie}, {1, 1, 1, OutcomeTie}, {2, 1, 0, OutcomeWin}, {0, 0, 0, OutcomeInvalid}, {0, 0, 1, OutcomeTie}}
	for _, c := range cases {
		if got := majority(c.w, c.l, c.t); got != c.want {
			t.Errorf("%v: %s", c, got)
		}
	}
}

func FuzzParseProposal(f *testing.F) {
	f.Add(proposalJSON(workflow.Generic().Render()))
	f.Add(`{"improved_multi_agent_design":[],"changes_from_previous":"x"}`)
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProposal(s)
		if err != nil {
			return
		}
		if _, err := workflow.Parse(p.Design); err != nil {
			t.Fatalf("accepted design does not parse: %v", err)
		}
	})
}

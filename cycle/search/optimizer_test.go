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
		"no json":     "I will add a verifier.",
		"bad design":  proposalJSON("Create a team: planner, coder"),
		"no design":   `{"changes_from_previous":["x"]}`,
		"only marker": proposalJSON(workflow.Header + "\n  "),
	} {
		if _, err := ParseProposal(in); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// The reference accepts any design that starts with the marker; the
// explanation keys are optional. Such a design is kept as text.
func TestParseProposalFreeText(t *testing.T) {
	extra := workflow.Header + "\n" + `[{"agent_id":"a","role":"r","instruction":"i","output_to_orchestrator":"table"}]` + "\n\nThe orchestrator recalls a on failure."
	p, err := ParseProposal(`{"improved_multi_agent_design": ` + strconvQuote(extra) + `}`)
	if err != nil {
		t.Fatal(err)
	}
	if p.Workflow.Strict() || p.Design != extra+"\n" {
		t.Fatalf("free design not kept as written: %q", p.Design)
	}
	// A copied post-design tail is cut (NormalizeDesign with the template's after text).
	after := "\n\n" + EndMarker + "—run code with uv run. write logs.txt."
	parse := proposalParser(DefaultPromptOptions(), after)
	g := workflow.Generic().Render()
	if p, err := parse(proposalJSON(g + "\n\n" + EndMarker + "—run code with uv run. write logs.txt.")); err != nil || p.Design != g {
		t.Fatalf("copied tail not trimmed: %q %v", p.Design, err)
	}
}

func TestParseProposalModesAndValidators(t *testing.T) {
	g := workflow.Generic().Render()
	o := DefaultPromptOptions()
	o.OutputMode = OutputDesignText
	p, err := proposalParser(o, "")("\n" + g + "\n")
	if err != nil || p.Design != g || p.MetadataNote == "" || string(p.ChangesFromPrevious) != "[]" {
		t.Fatalf("design-text: %+v %v", p, err)
	}
	if _, err := proposalParser(o, "")(proposalJSON(g)); err == nil {
		t.Fatal("design-text mode accepted a JSON reply as the design")
	}
	capped := workflow.Header + "\n" + `[{"agent_id":"a","role":"r","instruction":"Recall the coder up to 3 times; each agent is limited to 5 tool calls."}]`
	o = DefaultPromptOptions()
	o.ForbidFixedAgentLimits = true
	if _, err := proposalParser(o, "")(proposalJSON(capped)); err == nil || !strings.Contains(err.Error(), "agent is limited to 5") {
		t.Fatalf("fixed limits not rejected: %v", err)
	}
	if got := FixedAgentLimits("at most 4 agents; a maximum of 2 hours; the recall loop is capped to 3; up to 3 times"); strings.Join(got, "|") != "at most 4 agents|maximum of 2 hours|recall loop is capped to 3" {
		// The matches Python's re finds with the reference's patterns.
		t.Fatalf("matches: %q", got)
	}
	o = DefaultPromptOptions()
	o.MaxDesignChars = 40
	if _, err := proposalParser(o, "")(proposalJSON(g)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("max_design_chars: %v", err)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

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
		w, err := workflow.ParseDesign(p.Design)
		if err != nil {
			t.Fatalf("accepted design does not parse: %v", err)
		}
		if !strings.HasPrefix(p.Design, workflow.Header) || w.Render() != strings.TrimSpace(p.Design)+"\n" {
			t.Fatalf("accepted design %q", p.Design)
		}
	})
}

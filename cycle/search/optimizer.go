package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

// Proposal is the optimizer's answer (the reference's keys). Only the
// design is required, as in the reference; the explanation keys are kept
// as given.
type Proposal struct {
	Design              string          `json:"improved_multi_agent_design"`
	ChangesFromPrevious json.RawMessage `json:"changes_from_previous,omitempty"`
	WhyItShouldImprove  json.RawMessage `json:"why_it_should_improve,omitempty"`
	EvidenceUsed        json.RawMessage `json:"evidence_used,omitempty"`
	ExpectedImpact      json.RawMessage `json:"expected_impact,omitempty"`
	VerificationChecks  json.RawMessage `json:"verification_checks,omitempty"`
	MetadataNote        string          `json:"metadata_note,omitempty"`
	// Workflow is Design parsed (not serialised): strict, or free text.
	Workflow workflow.Workflow `json:"-"`
}

// designTextNote is the reference's note on a design-text answer.
const designTextNote = "design-text fallback: explanatory arrays were intentionally omitted to avoid JSON-escaping/truncation failures."

// ParseProposal reads a JSON-mode optimizer reply with the default
// toggles and no post-design text.
func ParseProposal(reply string) (Proposal, error) {
	return proposalParser(DefaultPromptOptions(), "")(reply)
}

// proposalParser reads an optimizer reply as the reference does: in JSON
// mode the last JSON object's improved_multi_agent_design (a string, or
// a bare JSON array of agents to which the header is added), in
// design-text mode the whole reply; then the design is normalised
// (NormalizeDesign with the post-design text after), checked against the
// toggles' validators, and parsed — strict, or free text.
func proposalParser(o PromptOptions, after string) func(string) (Proposal, error) {
	return func(reply string) (Proposal, error) {
		var p Proposal
		var raw string
		if o.OutputMode == OutputDesignText {
			raw = strings.TrimFunc(reply, pySpace)
			empty := json.RawMessage("[]")
			p = Proposal{ChangesFromPrevious: empty, WhyItShouldImprove: empty, EvidenceUsed: empty,
				ExpectedImpact: empty, VerificationChecks: empty, MetadataNote: designTextNote}
		} else {
			var err error
			if p, raw, err = jsonProposal(reply); err != nil {
				return Proposal{}, err
			}
		}
		design, err := NormalizeDesign(raw, after)
		if err != nil {
			return Proposal{}, fmt.Errorf("improved_multi_agent_design: %w", err)
		}
		if err := checkDesign(design, o); err != nil {
			return Proposal{}, err
		}
		if p.Workflow, err = workflow.ParseDesign(design); err != nil {
			return Proposal{}, fmt.Errorf("improved_multi_agent_design: %w", err)
		}
		p.Workflow.Text = design // kept as written, as the reference stores it
		p.Design = p.Workflow.Render()
		return p, nil
	}
}

func jsonProposal(reply string) (Proposal, string, error) {
	obj, err := judge.LastObject(reply)
	if err != nil {
		return Proposal{}, "", err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		return Proposal{}, "", fmt.Errorf("proposal is not a JSON object: %v", err)
	}
	rawDesign, ok := m["improved_multi_agent_design"]
	if !ok {
		return Proposal{}, "", errors.New("proposal lacks the key improved_multi_agent_design")
	}
	design, err := designText(rawDesign)
	if err != nil {
		return Proposal{}, "", err
	}
	p := Proposal{ChangesFromPrevious: m["changes_from_previous"], WhyItShouldImprove: m["why_it_should_improve"],
		EvidenceUsed: m["evidence_used"], ExpectedImpact: m["expected_impact"], VerificationChecks: m["verification_checks"]}
	return p, strings.TrimFunc(design, pySpace), nil
}

func designText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var arr []json.RawMessage
	if err := json.Unmarshal(raw, &arr); err == nil {
		return workflow.Header + "\n" + string(raw), nil
	}
	return "", errors.New("improved_multi_agent_design must be the design text")
}

// checkDesign applies the toggles' validators: no fixed agent limits
// (forbid_fixed_agent_limits) and at most max_design_chars characters.
func checkDesign(design string, o PromptOptions) error {
	if o.ForbidFixedAgentLimits {
		if m := FixedAgentLimits(design); len(m) > 0 {
			return fmt.Errorf("the design introduces fixed agent limits (%s); terminate through acceptance gates instead", strings.Join(m, ", "))
		}
	}
	if n := utf8.RuneCountInString(design); o.MaxDesignChars > 0 && n > o.MaxDesignChars {
		return fmt.Errorf("the design is too large: %d characters > %d", n, o.MaxDesignChars)
	}
	return nil
}

var fixedLimitREs = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(?:maximum|max(?:imum)?\s+of|at\s+most|up\s+to)\s+\d+\s+(?:agent|subagent|recall|re-delegation|redelegation|hop|turn|tool|iteration|round|minute|hour)s?\b`),
	regexp.MustCompile(`(?i)\b(?:agent|subagent|recall|re-delegation|redelegation|hop|turn|tool)(?:\s+\w+){0,3}\s+(?:is|are)?\s*(?:limited|capped)\s+to\s+\d+\b`),
}

// FixedAgentLimits finds the numerical caps the reference's
// --forbid-fixed-agent-limits validator rejects (each match once, white
// space collapsed).
func FixedAgentLimits(design string) []string {
	var out []string
	seen := map[string]bool{}
	for _, re := range fixedLimitREs {
		for _, m := range re.FindAllString(design, -1) {
			if ex := strings.Join(strings.Fields(m), " "); !seen[ex] {
				seen[ex] = true
				out = append(out, ex)
			}
		}
	}
	return out
}

// Optimize asks for a proposal, retrying a malformed or rejected reply
// with its error (judge.MaxAttempts replies in all).
func Optimize(ctx context.Context, m judge.Model, modelName string, seed int64, p judge.Prompt, o PromptOptions, after string) (Proposal, judge.Usage, error) {
	var u judge.Usage
	msgs := []judge.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}}
	// The optimizer's output budget (agents/model.RoleOptimizer) applies.
	again := "Answer again with the JSON object only."
	if o.OutputMode == OutputDesignText {
		again = "Answer again with the design block only, as plain text."
	}
	prop, err := judge.AskAgain(model.WithRole(ctx, model.RoleOptimizer), m, modelName, msgs, seed, judge.MaxAttempts, &u, proposalParser(o, after), again)
	return prop, u, err
}

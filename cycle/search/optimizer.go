package search

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

//go:embed templates/optimizer.tmpl
var files embed.FS

var optTmpl = template.Must(template.ParseFS(files, "templates/optimizer.tmpl"))

// OptimizerMarker starts every optimizer user prompt (the scripted model keys on it).
const OptimizerMarker = "MASS OPTIMIZER:"

// Proposal is the optimizer's answer (the reference's keys).
type Proposal struct {
	Design              string          `json:"improved_multi_agent_design"`
	ChangesFromPrevious json.RawMessage `json:"changes_from_previous"`
	WhyItShouldImprove  json.RawMessage `json:"why_it_should_improve"`
	EvidenceUsed        json.RawMessage `json:"evidence_used"`
	ExpectedImpact      json.RawMessage `json:"expected_impact"`
	VerificationChecks  json.RawMessage `json:"verification_checks"`
	// Workflow is Design parsed (not serialised).
	Workflow workflow.Workflow `json:"-"`
}

var proposalKeys = []string{"improved_multi_agent_design", "changes_from_previous", "why_it_should_improve",
	"evidence_used", "expected_impact", "verification_checks"}

// ParseProposal reads an optimizer reply: one JSON object with every
// proposal key; the design is a workflow text (or a bare JSON array of
// agents, to which the header is added) that must parse; the other keys
// are a non-empty string or array of strings.
func ParseProposal(reply string) (Proposal, error) {
	obj, err := judge.LastObject(reply)
	if err != nil {
		return Proposal{}, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		return Proposal{}, fmt.Errorf("proposal is not a JSON object: %v", err)
	}
	var missing []string
	for _, k := range proposalKeys {
		if _, ok := m[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return Proposal{}, fmt.Errorf("proposal lacks the keys %s", strings.Join(missing, ", "))
	}
	var p Proposal
	design, err := designText(m["improved_multi_agent_design"])
	if err != nil {
		return Proposal{}, err
	}
	if norm, nerr := NormalizeDesign(design, ""); nerr == nil {
		design = norm // the reference's trim of a copied post-design tail
	}
	if p.Workflow, err = workflow.Parse(design); err != nil {
		return Proposal{}, fmt.Errorf("improved_multi_agent_design: %w", err)
	}
	p.Design = p.Workflow.Render()
	for _, f := range []struct {
		key string
		dst *json.RawMessage
	}{{"changes_from_previous", &p.ChangesFromPrevious}, {"why_it_should_improve", &p.WhyItShouldImprove},
		{"evidence_used", &p.EvidenceUsed}, {"expected_impact", &p.ExpectedImpact}, {"verification_checks", &p.VerificationChecks}} {
		if !textual(m[f.key]) {
			return Proposal{}, fmt.Errorf("%s must be a non-empty string or array of strings", f.key)
		}
		*f.dst = m[f.key]
	}
	return p, nil
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

func textual(raw json.RawMessage) bool {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s) != ""
	}
	var ss []string
	if json.Unmarshal(raw, &ss) != nil || len(ss) == 0 {
		return false
	}
	for _, x := range ss {
		if strings.TrimSpace(x) == "" {
			return false
		}
	}
	return true
}

// OptimizerInput is everything the optimizer is shown.
type OptimizerInput struct {
	Task                            string
	V0, Champion, Current           string
	ChampionVersion, CurrentVersion int
	Status                          string // redacted execution status (RedactedStatus)
	Evidence                        string // rendered bundle of the latest candidate
	Scoreboard, History, Diffs      string
}

// RenderOptimizer fills the optimizer template.
func RenderOptimizer(in OptimizerInput) (judge.Prompt, error) {
	var p judge.Prompt
	for name, dst := range map[string]*string{"system": &p.System, "user": &p.User} {
		var b bytes.Buffer
		if err := optTmpl.ExecuteTemplate(&b, name, in); err != nil {
			return p, fmt.Errorf("render optimizer %s prompt: %w", name, err)
		}
		*dst = strings.TrimSpace(b.String())
	}
	return p, nil
}

// Optimize asks for a proposal, retrying a malformed reply with its error
// (judge.MaxAttempts replies in all).
func Optimize(ctx context.Context, m judge.Model, modelName string, seed int64, p judge.Prompt) (Proposal, judge.Usage, error) {
	var u judge.Usage
	msgs := []judge.Message{{Role: "system", Content: p.System}, {Role: "user", Content: p.User}}
	// The optimizer's output budget (agents/model.RoleOptimizer) applies.
	prop, err := judge.Ask(model.WithRole(ctx, model.RoleOptimizer), m, modelName, msgs, seed, &u, ParseProposal)
	return prop, u, err
}

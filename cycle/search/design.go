package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/searchfmt"
)

// OptimizerResult is optimizer/v{k}/result.json.
type OptimizerResult struct {
	Improvement string    `json:"improvement"` // "multi-agent-design-v2 -> multi-agent-design-v3"
	Version     int       `json:"version"`
	Status      string    `json:"status"` // ok | failed
	Model       string    `json:"model"`
	Seed        int64     `json:"seed"`
	OutputMode  string    `json:"improvement_output_mode"`
	Proposal    *Proposal `json:"proposal,omitempty"`
	judge.Usage
}

// PromptsDir holds the optimizer's prompt and result per step,
// evaluation_prompts/v{c}_to_v{k}/ (the reference's names).
const PromptsDir = searchfmt.PromptsDir

// optimizerDir is the folder of the step from v(current) to v(k).
func (r *runner) optimizerDir(current, k int) string {
	return filepath.Join(r.cfg.Dir, PromptsDir, fmt.Sprintf("v%d_to_v%d", current, k))
}

// design returns v(k): the stored file when it exists, else a new proposal
// from the optimizer shown v(current) and its episode. ok is false when
// the optimizer failed (recorded once, never retried on resume).
func (r *runner) design(ctx context.Context, k, current int) (workflow.Workflow, bool, error) {
	if wf, err := r.vers.Get(k); err == nil {
		return wf, true, nil
	}
	dir := r.optimizerDir(current, k)
	if b, err := os.ReadFile(filepath.Join(dir, "result.json")); err == nil {
		var res OptimizerResult
		if json.Unmarshal(b, &res) == nil && res.Status == "failed" {
			r.countFailed()
			return workflow.Workflow{}, false, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return workflow.Workflow{}, false, fmt.Errorf("read optimizer result v%d: %w", k, err)
	}
	latest, err := r.episodeOf(ctx, current)
	if err != nil {
		return workflow.Workflow{}, false, err
	}
	in, err := r.optimizerInput(current, latest)
	if err != nil {
		return workflow.Workflow{}, false, err
	}
	p, err := BuildOptimizerPrompt(in)
	if err != nil {
		return workflow.Workflow{}, false, err
	}
	seed := judgmentSeed(r.cfg.Seed, fmt.Sprintf("optimizer-v%d", k))
	prop, u, err := Optimize(ctx, r.cfg.Models, r.cfg.OptimizerModel, seed, p, r.cfg.Opts, r.afterDesign())
	if ctx.Err() != nil {
		return workflow.Workflow{}, false, ctx.Err()
	}
	r.mu.Lock()
	r.calls.OptimizerCalls += u.Attempts
	r.mu.Unlock()
	r.tokens(u.PromptTokens + u.CompletionTokens)
	res := OptimizerResult{Improvement: designLabel(current) + " -> " + designLabel(k), Version: k, Status: "ok",
		Model: r.cfg.OptimizerModel, Seed: seed, OutputMode: r.cfg.Opts.OutputMode, Usage: u}
	if err != nil {
		res.Status = "failed"
	} else {
		res.Proposal = &prop
	}
	if err := r.writeStep(dir, p, res); err != nil {
		return workflow.Workflow{}, false, err
	}
	if res.Status == "failed" {
		r.countFailed()
		r.cfg.Log.Warn("optimizer failed; iteration skipped", "version", k, "errors", u.Errors)
		return workflow.Workflow{}, false, nil
	}
	return prop.Workflow, true, nil
}

// writeStep stores a step's prompt, its design (before the result, so a
// result.json says the design is there) and its result.
func (r *runner) writeStep(dir string, p judge.Prompt, res OptimizerResult) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := workflow.WriteFileAtomic(filepath.Join(dir, "full_prompt.txt"), []byte(referenceDump(p))); err != nil {
		return err
	}
	if res.Proposal != nil {
		if err := r.vers.Put(res.Version, res.Proposal.Workflow); err != nil {
			return err
		}
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	return workflow.WriteFileAtomic(filepath.Join(dir, "result.json"), append(b, '\n'))
}

// referenceDump is a prompt as the reference's full_prompt.txt holds it.
func referenceDump(p judge.Prompt) string {
	return "=== SYSTEM PROMPT ===\n\n" + strings.TrimFunc(p.System, pySpace) + "\n\n=== USER PROMPT ===\n\n" + strings.TrimFunc(p.User, pySpace) + "\n"
}

// afterDesign is the template's post-design text ("" without one): a
// design that copied it is cut there.
func (r *runner) afterDesign() string {
	if r.cfg.Template == nil {
		return ""
	}
	return r.cfg.Template.After
}

func (r *runner) countFailed() {
	r.mu.Lock()
	r.failed++
	r.mu.Unlock()
}

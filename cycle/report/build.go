package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/generationfmt"
)

// Request selects what a report shows.
type Request struct {
	// Eval is the evaluation (evals/<name>); "" picks the newest rollout.
	Eval string `json:"eval,omitempty"`
	// Gens are generation numbers ("1") or model names ("gen-1"); empty:
	// every model of the rollout but the baseline.
	Gens []string `json:"gens,omitempty"`
}

// Build reads the evaluation's files and computes the report. Every
// number comes from the rollout, the verdict files, the episodes' records
// and the generations' files; nothing is taken from a job's result.
func Build(ctx context.Context, l datadir.Layout, req Request) (*Report, error) {
	name := req.Eval
	if name == "" {
		var err error
		if name, err = newestEval(l); err != nil {
			return nil, err
		}
	}
	if !datadir.ValidID(name) {
		return nil, fmt.Errorf("evaluation %q: not a valid name: %w", name, errclass.ErrInvalid)
	}
	ro, err := rollout.Load(l, name)
	if err != nil {
		return nil, err
	}
	vs, err := judgepairs.ReadVerdicts(l.Eval(name))
	if err != nil {
		return nil, err
	}
	r := &Report{Built: time.Now().UTC(), Eval: name, Tasks: ro.Tasks, Episodes: ro.Episodes, Unit: judgepairs.UnitNote,
		Verdicts: len(vs), Mode: judgepairs.ModeBundle, Judges: []judgepairs.JudgeSpec{}}
	r.Baseline = ro.Models[0]
	var prev judgepairs.Results
	if ok, err := generation.ReadJSON(filepath.Join(l.Eval(name), judgepairs.ResultsFile), &prev); err != nil {
		return nil, err
	} else if ok {
		r.Baseline, r.Mode, r.Judges = prev.Baseline, prev.Mode, prev.Judges
	}
	gens, err := r.resolve(ctx, l, ro, req.Gens)
	if err != nil {
		return nil, err
	}
	res, err := judgepairs.Summarize(vs, r.Models, selfJudges(vs, ro.Models))
	if err != nil {
		return nil, err
	}
	r.WinRates, r.Agreement, r.Costs, r.CostUSD = res.Models, res.Agreement, res.Costs, res.CostUSD
	r.Generations = gens
	r.Runs = runs(l, ro)
	r.Audit = r.audit(ctx, l, ro)
	r.Tokens = r.tokens(ro)
	r.Statistics = r.statistics(ro)
	r.BlindSpots = blindSpots(vs, ro)
	return r, nil
}

// newestEval is the evaluation whose rollout.json was written last.
func newestEval(l datadir.Layout) (string, error) {
	ents, err := os.ReadDir(l.Evals())
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("list evaluations: %w", err)
	}
	best, bestT := "", time.Time{}
	for _, e := range ents {
		fi, err := os.Stat(filepath.Join(l.Eval(e.Name()), rollout.SummaryFile))
		if err == nil && fi.ModTime().After(bestT) {
			best, bestT = e.Name(), fi.ModTime()
		}
	}
	if best == "" {
		return "", fmt.Errorf("no evaluation yet: run a rollout job and a judge-pairs job on it first: %w", errclass.ErrNotFound)
	}
	return best, nil
}

// resolve turns the requested generations into candidate models and the
// generations' summaries.
func (r *Report) resolve(ctx context.Context, l datadir.Layout, ro rollout.Summary, asked []string) ([]Gen, error) {
	byModel, err := generationsByModel(l)
	if err != nil {
		return nil, err
	}
	if len(asked) == 0 {
		for _, m := range ro.Models {
			if m != r.Baseline {
				asked = append(asked, m)
			}
		}
	}
	gens := []Gen{}
	for _, a := range asked {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		model := a
		if g, err := strconv.Atoi(a); err == nil {
			s, err := generationfmt.ReadSummary(l.Generation(strconv.Itoa(g)))
			if err != nil {
				return nil, fmt.Errorf("generation %d: %v: %w", g, err, errclass.ErrNotFound)
			}
			model = s.Model
		}
		if !slices.Contains(ro.Models, model) || model == r.Baseline {
			return nil, fmt.Errorf("%s: model %q is not a candidate of rollout %s (models %v, baseline %s): %w", a, model, ro.Name, ro.Models, r.Baseline, errclass.ErrInvalid)
		}
		if slices.Contains(r.Models, model) {
			continue
		}
		r.Models = append(r.Models, model)
		if s, ok := byModel[model]; ok {
			gens = append(gens, genOf(l, s))
		}
	}
	return gens, nil
}

func generationsByModel(l datadir.Layout) (map[string]generationfmt.Summary, error) {
	out := map[string]generationfmt.Summary{}
	ents, err := os.ReadDir(filepath.Join(l.Root, datadir.GenerationsDir))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("list generations: %w", err)
	}
	for _, e := range ents {
		if s, err := generationfmt.ReadSummary(l.Generation(e.Name())); err == nil && s.Model != "" {
			out[s.Model] = s
		}
	}
	return out, nil
}

func selfJudges(vs []judgepairs.Verdict, models []string) []string {
	seen := map[string]bool{}
	for _, v := range vs {
		if !v.External {
			seen[v.Model] = true
		}
	}
	var out []string
	for _, m := range models {
		if seen[m] {
			out = append(out, m)
		}
	}
	return out
}

func runs(l datadir.Layout, ro rollout.Summary) []EpisodeLink {
	out := []EpisodeLink{}
	for _, x := range ro.Runs {
		e := EpisodeLink{Task: x.Task, Model: x.Model, Index: x.Index, Seed: x.Seed, EpisodeID: x.EpisodeID, Exit: x.Exit,
			Graded: x.Graded, Passed: x.Passed, Score: x.Score, Output: x.CompletionTokens}
		if x.Error != "" {
			e.Exit = "error: " + x.Error
		}
		if datadir.ValidID(x.EpisodeID) {
			e.Dir = l.Episode(x.EpisodeID)
		}
		out = append(out, e)
	}
	return out
}

// score is a run's grader score: the verdict's score, else 1 or 0 for
// pass or fail; ok is false when no grader ran.
func score(x rollout.Run) (float64, bool) {
	switch {
	case !x.Graded || x.Error != "":
		return 0, false
	case x.Score != nil:
		return *x.Score, true
	case x.Passed:
		return 1, true
	}
	return 0, true
}

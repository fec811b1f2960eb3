package search

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

// runner is one search in progress.
type runner struct {
	cfg   Config
	slots *slots
	vers  workflow.Versions
	prior map[string]Comparison // rows already in the records when the run began

	mu           sync.Mutex
	prog         Progress
	history      []Comparison // baseline (or adjacent) rows
	arbitrations []Comparison // champion_v{c}_vs_v{k} rows
	champion     int
	calls        Calls
	failed       int // iterations whose optimizer failed
	perIteration []int
}

// Calls counts the role calls this run made (resumed work not included).
type Calls struct {
	Judgments        int `json:"judgments"`
	InvalidJudgments int `json:"invalid_judgments"`
	JudgeCalls       int `json:"judge_calls"`
	OptimizerCalls   int `json:"optimizer_calls"`
	// JudgmentsPerIteration[k] is the judgments made for v(k) this run.
	JudgmentsPerIteration []int `json:"judgments_per_iteration,omitempty"`
}

// Run runs (or resumes) the search described by cfg and returns its summary.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	for _, d := range []string{VersionsDirs, "updated_queries", ComparisonsDir, "records", PromptsDir} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o750); err != nil {
			return Summary{}, fmt.Errorf("create search dir: %w", err)
		}
	}
	if err := Freeze(cfg.Dir, cfg.Frozen()); err != nil {
		return Summary{}, err
	}
	sl, err := loadSlots(cfg.Dir)
	if err != nil {
		return Summary{}, err
	}
	r := &runner{cfg: cfg, slots: sl, vers: workflow.Versions{Dir: cfg.Dir}, prior: map[string]Comparison{}}
	for _, f := range []string{ComparisonHistoryFile, ChampionHistoryFile} {
		rows, err := ReadHistory(filepath.Join(cfg.Dir, f))
		if err != nil {
			return Summary{}, err
		}
		for _, c := range rows {
			r.prior[c.Key] = c
		}
	}
	r.prog.Iterations = cfg.Iterations
	if err := r.loop(ctx); err != nil {
		return r.summary(), err
	}
	if err := r.finish(); err != nil {
		return r.summary(), err
	}
	return r.summary(), nil
}

// VersionsDirs is the versions folder name (workflow.VersionsDir).
const VersionsDirs = workflow.VersionsDir

func (r *runner) loop(ctx context.Context) error {
	if _, err := r.vers.Get(0); err != nil {
		if err := r.vers.Put(0, r.cfg.V0); err != nil {
			return err
		}
	}
	if r.cfg.Rule != RuleAdjacent {
		if _, adopted := r.prior[BaselineKey(0)]; !adopted {
			if err := r.firstPair(ctx); err != nil {
				return err
			}
		}
		if err := r.judge(ctx, 0, baselinePair(0)); err != nil {
			return err
		}
	}
	current := 0
	for k := 1; k <= r.cfg.Iterations; k++ {
		r.progress(func(p *Progress) { p.Iteration = k; p.Stage = "optimizing" })
		_, ok, err := r.design(ctx, k, current)
		if err != nil {
			return err
		}
		if !ok {
			continue // the optimizer failed three times: iteration recorded as failed
		}
		if err := r.judgeVersion(ctx, k, current); err != nil {
			return err
		}
		current = k
	}
	return nil
}

// judgeVersion makes the comparisons of v(k) the rule needs: its baseline
// (or adjacent) comparison, then an arbitration against the champion only
// when the rule asks for one (under the paper rule: always).
func (r *runner) judgeVersion(ctx context.Context, k, prev int) error {
	first := baselinePair(k)
	if r.cfg.Rule == RuleAdjacent {
		first = adjacentPair(prev, k)
	}
	if err := r.judge(ctx, k, first); err != nil {
		return err
	}
	if d := r.decide(); d.NeedsArbitration && d.Current == k {
		return r.judge(ctx, k, arbitrationPair(d.Champion, k))
	}
	return nil
}

func (r *runner) judge(ctx context.Context, k int, p pair) error {
	before := r.countJudgments()
	c, err := r.compare(ctx, k, p)
	if err != nil {
		return err
	}
	r.mu.Lock()
	for len(r.perIteration) <= k {
		r.perIteration = append(r.perIteration, 0)
	}
	r.perIteration[k] += r.calls.Judgments - before
	r.calls.JudgmentsPerIteration = append([]int(nil), r.perIteration...)
	r.mu.Unlock()
	return r.record(c)
}

func (r *runner) countJudgments() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls.Judgments
}

// firstPair runs the reference and v0 episodes concurrently.
func (r *runner) firstPair(ctx context.Context) error {
	var errRef, errV0 error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _, errRef = r.episodeOf(ctx, -1) }()
	go func() { defer wg.Done(); _, errV0 = r.episodeOf(ctx, 0) }()
	wg.Wait()
	return errors.Join(errRef, errV0)
}

func (r *runner) episodeSeed(slot int) int { return int((r.cfg.Seed*1009 + int64(slot)) & 0x7fffffff) }

// episodeOf returns the finished episode of v(k) (k = -1: the bare-task
// reference), running it when the search has none: episodes are run only
// when a comparison or the optimizer needs them, so an adopted folder
// whose verdicts are recorded runs only what is still to be done.
func (r *runner) episodeOf(ctx context.Context, k int) (EpisodeResult, error) {
	if k < 0 {
		return r.episode(ctx, "reference", "", "", r.episodeSeed(0))
	}
	wf, err := r.vers.Get(k)
	if err != nil {
		return EpisodeResult{}, err
	}
	// A query file already there (a folder the reference wrote) is the
	// prompt v(k) ran with: it is sent again byte for byte.
	q := filepath.Join(r.cfg.Dir, "updated_queries", r.queryFile(k))
	prior, statErr := os.ReadFile(q)
	prompt := string(prior)
	if statErr != nil && r.cfg.Template != nil {
		prompt = r.templatePrompt(k, wf)
	}
	ep, err := r.episode(ctx, slotName(k), wf.Render(), prompt, r.episodeSeed(k+1))
	if err != nil {
		return ep, err
	}
	if statErr != nil && ep.TeacherPrompt != "" {
		if err := workflow.WriteFileAtomic(q, []byte(ep.TeacherPrompt)); err != nil {
			return ep, err
		}
	}
	return ep, nil
}

// templatePrompt is v(k)'s query inside the task's template: v0 with the
// template's own design runs the template file itself, as the reference
// runs its initial file; every other design is rendered into it.
func (r *runner) templatePrompt(k int, wf workflow.Workflow) string {
	if k == 0 {
		return r.cfg.Template.Query(wf.Render())
	}
	return r.cfg.Template.Render(wf.Render())
}

// queryFile names the prompt v(k)'s orchestrator got: the reference's
// query{q}_ourTeam-v{k}.txt when the task has a reference id, else
// <task>-v{k}.txt.
func (r *runner) queryFile(k int) string {
	if r.cfg.ReferenceID != "" {
		return fmt.Sprintf("query%s_ourTeam-v%d.txt", r.cfg.ReferenceID, k)
	}
	return fmt.Sprintf("%s-v%d.txt", r.cfg.TaskID, k)
}

func (r *runner) progress(f func(*Progress)) {
	r.mu.Lock()
	f(&r.prog)
	r.prog.ChampionVersion = r.champion
	p := r.prog
	r.mu.Unlock()
	if r.cfg.Observe != nil {
		r.cfg.Observe(p)
	}
}

func (r *runner) tokens(n int64) { r.progress(func(p *Progress) { p.Tokens += n }) }

func (r *runner) countJudgment(res judge.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls.Judgments++
	r.calls.JudgeCalls += res.Attempts
	if res.Status != judge.StatusValid {
		r.calls.InvalidJudgments++
	}
}

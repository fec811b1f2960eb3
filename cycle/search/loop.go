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

	mu       sync.Mutex
	prog     Progress
	history  []Comparison
	champion int
	calls    Calls
	failed   int // iterations whose optimizer failed
}

// Calls counts the role calls this run made (resumed work not included).
type Calls struct {
	Judgments        int `json:"judgments"`
	InvalidJudgments int `json:"invalid_judgments"`
	JudgeCalls       int `json:"judge_calls"`
	OptimizerCalls   int `json:"optimizer_calls"`
}

// Run runs (or resumes) the search described by cfg and returns its summary.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	for _, d := range []string{VersionsDirs, "updated_queries", ComparisonsDir, "records", "optimizer"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o750); err != nil {
			return Summary{}, fmt.Errorf("create search dir: %w", err)
		}
	}
	sl, err := loadSlots(cfg.Dir)
	if err != nil {
		return Summary{}, err
	}
	r := &runner{cfg: cfg, slots: sl, vers: workflow.Versions{Dir: cfg.Dir}}
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
	if err := r.vers.Put(0, r.cfg.V0); err != nil {
		return err
	}
	ref, v0, err := r.firstPair(ctx)
	if err != nil {
		return err
	}
	eps := map[int]EpisodeResult{0: v0}
	c, err := r.compare(ctx, 0, "v0", "reference", "reference", v0, ref)
	if err != nil {
		return err
	}
	if err := r.record(c); err != nil {
		return err
	}
	current := 0
	for k := 1; k <= r.cfg.Iterations; k++ {
		r.progress(func(p *Progress) { p.Iteration = k; p.Stage = "optimizing" })
		wf, ok, err := r.design(ctx, k, current, eps[current])
		if err != nil {
			return err
		}
		if !ok {
			continue // the optimizer failed three times: iteration recorded as failed
		}
		ep, err := r.teacherEpisode(ctx, k, wf)
		if err != nil {
			return err
		}
		eps[k], current = ep, k
		if err := r.judgeCandidate(ctx, k, ep, ref, eps); err != nil {
			return err
		}
	}
	return nil
}

// firstPair runs the reference and v0 episodes concurrently.
func (r *runner) firstPair(ctx context.Context) (EpisodeResult, EpisodeResult, error) {
	var ref, v0 EpisodeResult
	var errRef, errV0 error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ref, errRef = r.episode(ctx, "reference", "", r.episodeSeed(0)) }()
	go func() { defer wg.Done(); v0, errV0 = r.teacherEpisode(ctx, 0, r.cfg.V0) }()
	wg.Wait()
	return ref, v0, errors.Join(errRef, errV0)
}

func (r *runner) episodeSeed(slot int) int { return int((r.cfg.Seed*1009 + int64(slot)) & 0x7fffffff) }

// teacherEpisode runs v(k) and keeps the teacher prompt actually sent.
func (r *runner) teacherEpisode(ctx context.Context, k int, wf workflow.Workflow) (EpisodeResult, error) {
	slot := fmt.Sprintf("v%d", k)
	ep, err := r.episode(ctx, slot, wf.Render(), r.episodeSeed(k+1))
	if err != nil {
		return ep, err
	}
	q := filepath.Join(r.cfg.Dir, "updated_queries", fmt.Sprintf("%s-v%d.txt", r.cfg.TaskID, k))
	if _, statErr := os.Stat(q); statErr != nil && ep.TeacherPrompt != "" {
		if err := workflow.WriteFileAtomic(q, []byte(ep.TeacherPrompt)); err != nil {
			return ep, err
		}
	}
	return ep, nil
}

// judgeCandidate judges v(k) against the reference and the champion and
// moves the champion on a win.
func (r *runner) judgeCandidate(ctx context.Context, k int, ep, ref EpisodeResult, eps map[int]EpisodeResult) error {
	cand := fmt.Sprintf("v%d", k)
	c, err := r.compare(ctx, k, cand, "reference", "reference", ep, ref)
	if err != nil {
		return err
	}
	if err := r.record(c); err != nil {
		return err
	}
	champ := r.championVersion()
	champEp, ok := eps[champ]
	if !ok {
		sl, _ := r.slots.get(fmt.Sprintf("v%d", champ))
		if sl.Result == nil {
			return fmt.Errorf("champion v%d has no finished episode", champ)
		}
		champEp = *sl.Result
	}
	c, err = r.compare(ctx, k, cand, fmt.Sprintf("v%d", champ), "champion", ep, champEp)
	if err != nil {
		return err
	}
	return r.record(c)
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

func (r *runner) championVersion() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.champion
}

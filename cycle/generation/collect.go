package generation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sync"
)

// TaskPlan is a task that passed stage eligible.
type TaskPlan struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
}

// Plan is tasks.json: the result of stage eligible.
type Plan struct {
	Eligible []TaskPlan `json:"eligible"`
	Excluded []Excluded `json:"excluded"`
}

// Collected is collect/<task>/outcome.json.
type Collected struct {
	Task       string            `json:"task"`
	Runs       int               `json:"runs"`     // episodes that finished, top-ups included
	Eligible   []string          `json:"eligible"` // episode ids that passed the predicate
	Tokens     int64             `json:"tokens"`
	Excluded   string            `json:"excluded,omitempty"`   // the reason the task cannot go on
	Ineligible map[string]string `json:"ineligible,omitempty"` // episode id (or slot) → reason
}

func (p *pipeline) eligible(ctx context.Context) (Plan, error) {
	plan := Plan{Eligible: []TaskPlan{}, Excluded: []Excluded{}}
	if err := CheckSplits(ctx, p.cfg.Splits, p.cfg.Tasks); err != nil {
		return plan, err
	}
	for _, id := range p.cfg.Tasks {
		r, err := p.cfg.Workflows.Retained(ctx, id)
		switch {
		case ctx.Err() != nil:
			return plan, ctx.Err()
		case err != nil:
			plan.Excluded = append(plan.Excluded, Excluded{ID: id, Reason: fmt.Sprintf("no retained workflow: %v", err)})
		case !r.BeatsReference:
			plan.Excluded = append(plan.Excluded, Excluded{ID: id, Reason: "its search never beat the bare-task reference"})
		default:
			plan.Eligible = append(plan.Eligible, TaskPlan{ID: id, Workflow: r.Workflow})
		}
	}
	return plan, nil
}

// collect runs a task's teacher episodes: Episodes slots first, then, while
// fewer than MinSuccess are eligible, top-ups up to Cap runs. It starts no
// episode once the eligible ones can no longer reach MinSuccess within Cap
// (the task is excluded, saying so).
func (p *pipeline) collect(ctx context.Context, t TaskPlan) (Collected, error) {
	dir := filepath.Join(p.cfg.Dir, CollectDir, t.ID)
	var out Collected
	if ok, err := readJSON(filepath.Join(dir, "outcome.json"), &out); ok || err != nil {
		return out, err
	}
	b, err := openBook[EpisodeResult](filepath.Join(dir, "episodes.json"))
	if err != nil {
		return out, err
	}
	base := seedOf(p.cfg.Seed, "collect", t.ID)
	runs, want := 0, p.cfg.Episodes
	var mu sync.Mutex // want, read by the progress of running episodes
	report := func() bool {
		mu.Lock()
		planned := want
		mu.Unlock()
		done, n := countRuns(b.slots())
		p.progress(collectProgress(t.ID, done, planned, n, p.cfg.MinSuccess))
		return n+p.cfg.Cap-done < p.cfg.MinSuccess
	}
	hopeless := report()
	for !hopeless {
		if err := parallel(ctx, want-runs, p.cfg.Concurrency, func(ctx context.Context, i int) error {
			if report() {
				return nil // this slot could not change the outcome: never started
			}
			err := p.episode(ctx, b, t, runs+i, base)
			report()
			return err
		}); err != nil {
			return out, err
		}
		runs = want
		if hopeless = report(); hopeless {
			break
		}
		n := countEligible(b.slots())
		if n >= p.cfg.MinSuccess || runs >= p.cfg.Cap {
			break
		}
		mu.Lock()
		want = min(p.cfg.Cap, runs+p.cfg.MinSuccess-n)
		mu.Unlock()
	}
	out = summarizeCollect(t.ID, b.slots())
	switch {
	case len(out.Eligible) >= p.cfg.MinSuccess:
	case hopeless && out.Runs < p.cfg.Cap:
		out.Excluded = fmt.Sprintf("stopped early: %d of %d episodes eligible, need %d; the %d runs left of the cap of %d cannot reach it%s",
			len(out.Eligible), out.Runs, p.cfg.MinSuccess, p.cfg.Cap-out.Runs, p.cfg.Cap, topReason(out.Ineligible))
	default:
		out.Excluded = fmt.Sprintf("%d of %d episodes eligible, need %d%s", len(out.Eligible), out.Runs, p.cfg.MinSuccess, topReason(out.Ineligible))
	}
	return out, writeJSON(filepath.Join(dir, "outcome.json"), out)
}

func (p *pipeline) episode(ctx context.Context, b *book[EpisodeResult], t TaskPlan, i int, base int64) error {
	slot := fmt.Sprintf("%02d", i)
	seed := base + int64(i) // distinct seeds within a task
	_, err := b.run(ctx, slot, seed, work[EpisodeResult]{
		attempts: p.cfg.Attempts,
		newID:    func(int) string { return newEpisodeID() },
		closeID:  p.cfg.Runner.Close,
		do: func(ctx context.Context, a Attempt) (EpisodeResult, error) {
			r, err := p.cfg.Runner.Run(ctx, EpisodeRequest{ID: a.ID, Task: t.ID, Slot: slot, Attempt: a.N,
				Workflow: t.Workflow, Directive: p.cfg.Directive, Model: p.cfg.Parent.Name, Seed: seed})
			if err == nil && r.EpisodeID == "" {
				r.EpisodeID = a.ID
			}
			return r, err
		},
		fail: func(err error) *EpisodeResult { return &EpisodeResult{Reason: "episode error: " + err.Error()} },
	})
	return err
}

// topReason is the commonest reason in why, with its count, as "
// (commonest: REASON, N of M)", or "" when why is empty.
func topReason(why map[string]string) string {
	n := map[string]int{}
	best := ""
	for _, r := range why {
		n[r]++
		if n[r] > n[best] || (n[r] == n[best] && r < best) {
			best = r
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (commonest reason: %s, %d of %d)", best, n[best], len(why))
}

// countRuns is how many slots have a result and how many of those are eligible.
func countRuns(slots []Slot[EpisodeResult]) (runs, eligible int) {
	for _, s := range slots {
		if s.Result != nil {
			runs++
		}
	}
	return runs, countEligible(slots)
}

func countEligible(slots []Slot[EpisodeResult]) int {
	n := 0
	for _, s := range slots {
		if s.Result != nil && s.Result.Reason == "" && s.Result.EpisodeID != "" {
			n++
		}
	}
	return n
}

func summarizeCollect(task string, slots []Slot[EpisodeResult]) Collected {
	out := Collected{Task: task, Eligible: []string{}, Ineligible: map[string]string{}}
	for _, s := range slots {
		if s.Result == nil {
			continue
		}
		out.Runs++
		out.Tokens += s.Result.Tokens
		if s.Result.Reason == "" && s.Result.EpisodeID != "" {
			out.Eligible = append(out.Eligible, s.Result.EpisodeID)
			continue
		}
		key := s.Result.EpisodeID
		if key == "" {
			key = "slot " + s.Name
		}
		out.Ineligible[key] = s.Result.Reason
	}
	return out
}

func newEpisodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ep-" + hex.EncodeToString(b[:])
}

// seedOf derives a stage's seed from the generation seed and names.
func seedOf(seed int64, names ...string) int64 {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, n := range names {
		h.Write([]byte{0})
		h.Write([]byte(n))
	}
	return int64(h.Sum64() >> 16) // room to add slot numbers without overflow
}

// parallel runs f(0..n-1), at most conc at once; the first error cancels
// the rest and is returned.
func parallel(ctx context.Context, n, conc int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := 0; i < n; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

package generation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/cycle/rank"
)

// Ranked is rank/<task>/ranking.json: the fit and the task's selection.
type Ranked struct {
	Task      string         `json:"task"`
	RingSeed  int64          `json:"ring_seed"`
	Judgments int            `json:"judgments"` // valid verdicts
	Invalid   int            `json:"invalid_judgments"`
	Tokens    int64          `json:"tokens"`
	Scores    []rank.Score   `json:"scores"`
	Selection rank.Selection `json:"selection"`
	Excluded  string         `json:"excluded,omitempty"`
}

// matchLine is a row of rank/<task>/matches.jsonl, the reference's
// task{q}_matches.jsonl shape: winner is a's id, b's id, "tie" or "invalid".
type matchLine struct {
	A         string `json:"a"`
	B         string `json:"b"`
	Winner    string `json:"winner"`
	Rationale string `json:"rationale,omitempty"`
	Model     string `json:"model"`
	Seed      int64  `json:"seed"`
}

// rankTask judges the ring over a task's eligible episodes, fits
// Bradley–Terry and selects the train and validation episodes.
func (p *pipeline) rankTask(ctx context.Context, c Collected) (Ranked, error) {
	dir := filepath.Join(p.cfg.Dir, RankDir, c.Task)
	var out Ranked
	if ok, err := readJSON(filepath.Join(dir, "ranking.json"), &out); ok || err != nil {
		return out, err
	}
	ringSeed := seedOf(p.cfg.RankSeed, "ring", c.Task)
	pairs, err := rank.Ring(c.Eligible, p.cfg.Opponents, uint64(ringSeed))
	if err != nil {
		return out, fmt.Errorf("ring of %s: %w", c.Task, err)
	}
	b, err := openBook[Verdict](filepath.Join(dir, "judgments.json"))
	if err != nil {
		return out, err
	}
	verdicts := make([]Verdict, len(pairs))
	report := func() {
		done, invalid := countJudged(b.slots())
		p.progress(rankProgress(c.Task, done, len(pairs), invalid))
	}
	report()
	err = parallel(ctx, len(pairs), p.cfg.Concurrency, func(ctx context.Context, i int) error {
		v, err := p.judge(ctx, b, c.Task, pairs[i])
		verdicts[i] = v
		report()
		return err
	})
	if err != nil {
		return out, err
	}
	out, lines := p.fit(c, pairs, verdicts)
	out.RingSeed = ringSeed
	if err := writeMatches(filepath.Join(dir, "matches.jsonl"), lines); err != nil {
		return out, err
	}
	return out, writeJSON(filepath.Join(dir, "ranking.json"), out)
}

func (p *pipeline) judge(ctx context.Context, b *book[Verdict], task string, pr rank.Pair) (Verdict, error) {
	key := pr.A + "|" + pr.B
	seed := seedOf(p.cfg.RankSeed, "judge", task, key)
	return b.run(ctx, key, seed, work[Verdict]{
		attempts: p.cfg.Attempts,
		newID:    func(n int) string { return fmt.Sprintf("%s#%d", key, n) },
		do: func(ctx context.Context, a Attempt) (Verdict, error) {
			return p.cfg.Judge.Judge(ctx, JudgeRequest{Key: key, Task: task, A: pr.A, B: pr.B,
				Model: p.cfg.Parent.Name, Seed: seed, Attempt: a.N})
		},
		fail: func(err error) *Verdict { return &Verdict{Winner: "invalid", Rationale: "judge error: " + err.Error()} },
	})
}

// countJudged is how many judgments have a verdict and how many of those
// never parsed.
func countJudged(slots []Slot[Verdict]) (done, invalid int) {
	for _, s := range slots {
		if s.Result == nil {
			continue
		}
		done++
		a, b, _ := strings.Cut(s.Name, "|")
		if _, ok := rank.ParseWinner(a, b, s.Result.Winner); !ok {
			invalid++
		}
	}
	return done, invalid
}

// fit turns the verdicts into matches (invalid ones counted, never tied),
// the Bradley–Terry scores and the selection.
func (p *pipeline) fit(c Collected, pairs []rank.Pair, verdicts []Verdict) (Ranked, []matchLine) {
	out := Ranked{Task: c.Task, Selection: rank.Selection{Train: []string{}, Val: []string{}}}
	var matches []rank.Match
	lines := make([]matchLine, len(pairs))
	for i, pr := range pairs {
		v := verdicts[i]
		out.Tokens += v.Tokens
		lines[i] = matchLine{A: pr.A, B: pr.B, Winner: "invalid", Rationale: v.Rationale, Model: p.cfg.Parent.Name,
			Seed: seedOf(p.cfg.RankSeed, "judge", c.Task, pr.A+"|"+pr.B)}
		o, ok := rank.ParseWinner(pr.A, pr.B, v.Winner)
		if !ok {
			out.Invalid++
			continue
		}
		out.Judgments++
		matches = append(matches, rank.Match{A: pr.A, B: pr.B, Winner: o})
		lines[i].Winner = map[rank.Outcome]string{rank.AWins: pr.A, rank.BWins: pr.B, rank.Tie: "tie"}[o]
	}
	scores, err := rank.Fit(c.Eligible, matches, rank.Options{})
	if err != nil {
		out.Excluded = fmt.Sprintf("fit: %v", err)
		return out, lines
	}
	out.Scores = scores
	sel, err := rank.Select(scores, p.cfg.Train, p.cfg.Val)
	if err != nil {
		out.Excluded = err.Error()
		return out, lines
	}
	out.Selection = sel
	return out, lines
}

func writeMatches(path string, lines []matchLine) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("encode match: %w", err)
		}
	}
	return writeFile(path, buf.Bytes())
}

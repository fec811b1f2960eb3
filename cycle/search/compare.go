package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

// Outcomes of a comparison, from the candidate's side.
const (
	OutcomeWin     = "win"
	OutcomeLoss    = "loss"
	OutcomeTie     = "tie" // a tie or no majority
	OutcomeInvalid = "invalid"
)

// ComparisonsDir holds one folder per judgment.
const ComparisonsDir = "comparisons"

// Comparison is one line of records/comparison_history.jsonl: a candidate
// judged against an opponent, aggregated over its judgments.
type Comparison struct {
	Iteration       int      `json:"iteration"`
	Key             string   `json:"key"`
	Candidate       string   `json:"candidate"` // "v3"
	Opponent        string   `json:"opponent"`  // "reference" or "v1"
	Against         string   `json:"against"`   // "reference" or "champion"
	Outcome         string   `json:"outcome"`   // win, loss, tie, invalid
	Wins            int      `json:"wins"`
	Losses          int      `json:"losses"`
	Ties            int      `json:"ties"`
	Invalid         int      `json:"invalid"`
	Judgments       []string `json:"judgments"` // comparison folder keys
	Rationale       string   `json:"rationale"` // of the first valid verdict agreeing with the outcome
	ChampionBefore  int      `json:"champion_before"`
	ChampionChanged bool     `json:"champion_changed"`
}

// majority decides from valid verdicts: more than half wins or losses.
func majority(w, l, t int) string {
	n := w + l + t
	switch {
	case n == 0:
		return OutcomeInvalid
	case 2*w > n:
		return OutcomeWin
	case 2*l > n:
		return OutcomeLoss
	}
	return OutcomeTie
}

func version(slot string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(slot, "v"))
	if err != nil {
		return -1
	}
	return n
}

func slotOrder[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return version(keys[i]) < version(keys[j]) })
	return keys
}

func judgmentSeed(seed int64, key string) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, key)
	return int64(h.Sum64() & 0x7fffffffffff)
}

// compare judges candidate against opponent Judgments times (each judgment
// once: a stored result.json is reused) and aggregates.
func (r *runner) compare(ctx context.Context, k int, cand, opp, against string, a, b EpisodeResult) (Comparison, error) {
	c := Comparison{Iteration: k, Key: cand + "_vs_" + against, Candidate: cand, Opponent: opp, Against: against}
	if against == "champion" {
		c.Key = cand + "_vs_champion_" + opp
	}
	for j := 1; j <= r.cfg.Judgments; j++ {
		key := fmt.Sprintf("%s_j%d", c.Key, j)
		res, err := r.judgment(ctx, key, cand, opp, a, b)
		if err != nil {
			return c, err
		}
		c.Judgments = append(c.Judgments, key)
		switch {
		case res.Status != judge.StatusValid:
			c.Invalid++
		case res.WinnerLabel == cand:
			c.Wins++
		case res.WinnerLabel == opp:
			c.Losses++
		default:
			c.Ties++
		}
	}
	c.Outcome = majority(c.Wins, c.Losses, c.Ties)
	c.Rationale = r.rationale(c)
	return c, nil
}

func (r *runner) judgment(ctx context.Context, key, cand, opp string, a, b EpisodeResult) (judge.Result, error) {
	dir := filepath.Join(r.cfg.Dir, ComparisonsDir, key)
	if res, err := readResult(dir); err == nil {
		return res, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return res, err
	}
	r.progress(func(p *Progress) { p.Stage = "judging " + key })
	req := judge.Request{Key: key, Task: r.cfg.Task, First: judge.Side{Label: cand, Tar: a.Export},
		Second: judge.Side{Label: opp, Tar: b.Export}, Model: r.cfg.JudgeModel, Seed: judgmentSeed(r.cfg.Seed, key)}
	var res judge.Result
	var prompt judge.Prompt
	var err error
	if a.Export == "" || b.Export == "" {
		res = judge.Result{Key: key, Model: req.Model, Seed: req.Seed, Mode: r.cfg.JudgeMode, A: cand, B: opp,
			Status: judge.StatusInvalid, Winner: judge.StatusInvalid}
		res.Errors = []string{"a side has no workspace export"}
	} else {
		if r.cfg.JudgeMode == JudgeModeAgent {
			res, prompt, err = judge.RunAgent(ctx, r.cfg.Judges, req)
		} else {
			res, prompt, err = judge.Run(ctx, r.cfg.Models, req)
		}
		if err != nil {
			return res, fmt.Errorf("judgment %s: %w", key, err)
		}
	}
	r.tokens(res.PromptTokens + res.CompletionTokens)
	r.countJudgment(res)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return res, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := workflow.WriteFileAtomic(filepath.Join(dir, "full_prompt.txt"), []byte(prompt.Full())); err != nil {
		return res, err
	}
	b2, _ := json.MarshalIndent(res, "", "  ")
	return res, workflow.WriteFileAtomic(filepath.Join(dir, "result.json"), append(b2, '\n'))
}

func readResult(dir string) (judge.Result, error) {
	var res judge.Result
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return res, err
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return res, fmt.Errorf("parse %s: %w", dir, err)
	}
	return res, nil
}

func (r *runner) rationale(c Comparison) string {
	for _, key := range c.Judgments {
		res, err := readResult(filepath.Join(r.cfg.Dir, ComparisonsDir, key))
		if err != nil || res.Status != judge.StatusValid {
			continue
		}
		agrees := (c.Outcome == OutcomeWin && res.WinnerLabel == c.Candidate) ||
			(c.Outcome == OutcomeLoss && res.WinnerLabel == c.Opponent) || c.Outcome == OutcomeTie
		if agrees {
			return res.Rationale
		}
	}
	return ""
}

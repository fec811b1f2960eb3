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
	"time"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/searchfmt"
)

// Outcomes of a comparison, from the candidate's side (mass's fields).
const (
	OutcomeWin     = "win"
	OutcomeLoss    = "loss"
	OutcomeTie     = "tie" // a tie or no majority
	OutcomeInvalid = "invalid"
)

// ComparisonsDir holds one folder per judgment.
const ComparisonsDir = searchfmt.ComparisonsDir

// Kinds of comparison (what the candidate is judged against).
const (
	AgainstReference = "reference" // v{k}_vs_no_harness
	AgainstChampion  = "champion"  // champion_v{c}_vs_v{k}
	AgainstPrevious  = "previous"  // v{k-1}_vs_v{k}
)

// CallMetrics are a comparison's judge calls.
type CallMetrics struct {
	Judgments        int   `json:"judgments"`
	Attempts         int   `json:"attempts"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Comparison is one line of records/comparison_history.jsonl (baseline or
// adjacent rows) or records/champion_history.jsonl (arbitration rows): the
// reference's fields first, in its orientation (A = the baseline, the
// champion or the older version; B = the version judged), then mass's.
type Comparison struct {
	Key             string      `json:"key"`
	Comparison      string      `json:"comparison"`
	Kind            string      `json:"kind,omitempty"` // "champion_arbitration"
	VersionA        *int        `json:"version_a,omitempty"`
	VersionB        int         `json:"version_b"`
	Baseline        string      `json:"baseline,omitempty"` // "no_harness"
	RepoA           string      `json:"repo_a"`
	RepoB           string      `json:"repo_b"`
	Winner          string      `json:"winner"` // A | B | tie (an invalid comparison is a tie)
	Rationale       string      `json:"rationale"`
	JudgedAt        string      `json:"judged_at_utc"`
	LLMBackend      string      `json:"llm_backend"`
	Model           string      `json:"model"`
	BaseURL         *string     `json:"base_url"`
	ReasoningEffort *string     `json:"reasoning_effort"`
	Temperature     *float64    `json:"temperature"`
	CallMetrics     CallMetrics `json:"call_metrics"`

	Iteration       int      `json:"iteration"`
	Candidate       string   `json:"candidate"` // "v3"
	Opponent        string   `json:"opponent"`  // "reference" or "v1"
	Against         string   `json:"against"`   // reference | champion | previous
	Outcome         string   `json:"outcome"`   // win, loss, tie, invalid
	Wins            int      `json:"wins"`
	Losses          int      `json:"losses"`
	Ties            int      `json:"ties"`
	Invalid         int      `json:"invalid"`
	Judgments       []string `json:"judgments"` // comparison folder keys
	ChampionBefore  int      `json:"champion_before"`
	ChampionChanged bool     `json:"champion_changed"`
}

// Verdict is the row as a rule reads it.
func (c Comparison) Verdict() Verdict { return Verdict{Key: c.Key, Winner: c.Winner} }

// pair is one comparison to make: b (the version judged) against a.
type pair struct {
	key, against string
	a, b         int // a is -1 for the baseline
}

func baselinePair(k int) pair {
	return pair{key: BaselineKey(k), against: AgainstReference, a: -1, b: k}
}
func arbitrationPair(c, k int) pair {
	return pair{key: ArbitrationKey(c, k), against: AgainstChampion, a: c, b: k}
}
func adjacentPair(p, k int) pair {
	return pair{key: fmt.Sprintf("v%d_vs_v%d", p, k), against: AgainstPrevious, a: p, b: k}
}

func slotName(v int) string {
	if v < 0 {
		return "reference"
	}
	return fmt.Sprintf("v%d", v)
}

func designLabel(v int) string {
	if v < 0 {
		return "no-harness-single-agent-baseline"
	}
	return fmt.Sprintf("multi-agent-design-v%d", v)
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

// winnerOf maps the candidate's outcome to the reference's orientation.
func winnerOf(outcome string) string {
	switch outcome {
	case OutcomeWin:
		return WinB
	case OutcomeLoss:
		return WinA
	}
	return WinTie
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

// judgmentDir is the folder of judgment j of key: the key itself with one
// judgment per comparison (as the reference), <key>_j{n} with several.
func (r *runner) judgmentDir(key string, j int) string {
	if r.cfg.Judgments == 1 {
		return key
	}
	return fmt.Sprintf("%s_j%d", key, j)
}

// compare returns the row of p: a row already in the records is kept as
// it is (a resumed or adopted search never asks again), else b is judged
// against a Judgments times (a stored result.json is reused) and the
// verdicts are aggregated.
func (r *runner) compare(ctx context.Context, k int, p pair) (Comparison, error) {
	if c, ok := r.prior[p.key]; ok {
		return c, nil
	}
	epA, err := r.episodeOf(ctx, p.a)
	if err != nil {
		return Comparison{}, err
	}
	epB, err := r.episodeOf(ctx, p.b)
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{Key: p.key, Comparison: designLabel(p.a) + " vs " + designLabel(p.b), VersionB: p.b,
		RepoA: epA.Dir, RepoB: epB.Dir, LLMBackend: "mass", Model: r.cfg.JudgeModel,
		Iteration: k, Candidate: slotName(p.b), Opponent: slotName(p.a), Against: p.against}
	if p.a >= 0 {
		a := p.a
		c.VersionA = &a
	} else {
		c.Baseline = "no_harness"
	}
	if p.against == AgainstChampion {
		c.Kind = "champion_arbitration"
	}
	var valid []judge.Result
	for j := 1; j <= r.cfg.Judgments; j++ {
		key := r.judgmentDir(p.key, j)
		res, err := r.judgment(ctx, key, c.Candidate, c.Opponent, epB, epA)
		if err != nil {
			return c, err
		}
		c.Judgments = append(c.Judgments, key)
		c.CallMetrics.Judgments++
		c.CallMetrics.Attempts += res.Attempts
		c.CallMetrics.PromptTokens += res.PromptTokens
		c.CallMetrics.CompletionTokens += res.CompletionTokens
		c.JudgedAt = max(c.JudgedAt, res.JudgedAt)
		switch {
		case res.Status != judge.StatusValid:
			c.Invalid++
			continue
		case res.WinnerLabel == c.Candidate:
			c.Wins++
		case res.WinnerLabel == c.Opponent:
			c.Losses++
		default:
			c.Ties++
		}
		valid = append(valid, res)
	}
	c.Outcome = majority(c.Wins, c.Losses, c.Ties)
	c.Winner = winnerOf(c.Outcome)
	c.Rationale = rationale(c, valid)
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
	req := judge.Request{Key: key, Task: r.judgeTask(), First: judge.Side{Label: cand, Tar: a.Export},
		Second: judge.Side{Label: opp, Tar: b.Export}, Model: r.cfg.JudgeModel, Seed: judgmentSeed(r.cfg.Seed, key),
		Attempts: *r.cfg.JudgeRetries + 1}
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
	res.JudgedAt = time.Now().UTC().Format(time.RFC3339Nano)
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

// rationale is that of the first valid verdict agreeing with the outcome.
func rationale(c Comparison, valid []judge.Result) string {
	for _, res := range valid {
		agrees := (c.Outcome == OutcomeWin && res.WinnerLabel == c.Candidate) ||
			(c.Outcome == OutcomeLoss && res.WinnerLabel == c.Opponent) || c.Outcome == OutcomeTie
		if agrees {
			return res.Rationale
		}
	}
	return ""
}

package judgepairs

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/stats"
)

// Files in an evaluation directory beside the rollout's.
const (
	VerdictsDir = "verdicts" // verdicts/<task>/<NN>-<candidate>/<judge>-<seed>.json
	ResultsFile = "judgement.json"
	// MaxVerdictBytes caps a verdict file read back.
	MaxVerdictBytes = 4 << 20
)

// Verdict is one verdict file: cycle/judge's result.json (its model is
// the judge, its seed the judge's seed, and the seed with the key decides
// which side was shown as A) with the pair it judged.
type Verdict struct {
	Task             string `json:"task"`
	Index            int    `json:"index"`
	Candidate        string `json:"candidate"` // the model compared with the baseline
	Baseline         string `json:"baseline"`
	CandidateEpisode string `json:"candidate_episode"`
	BaselineEpisode  string `json:"baseline_episode"`
	External         bool   `json:"external"` // an external judge; false: a self-judge
	// CostUSD is the billed prompt tokens × the judge's input price plus
	// the completion tokens × its output price (Price; none: 0).
	CostUSD float64      `json:"cost_usd"`
	Price   *model.Price `json:"price,omitempty"`
	judge.Result
}

// PairID names a pair: verdicts on one pair are one sample.
func PairID(task string, index int, candidate string) string {
	return fmt.Sprintf("%s/%02d/%s", task, index, candidate)
}

// Pair is the pair the verdict judged.
func (v Verdict) Pair() string { return PairID(v.Task, v.Index, v.Candidate) }

// Outcome is the verdict from the candidate's side; ok is false for an
// invalid verdict (excluded everywhere, counted).
func (v Verdict) Outcome() (stats.Outcome, bool) {
	switch {
	case v.Status != judge.StatusValid:
		return 0, false
	case v.Winner == judge.WinnerTie:
		return stats.Tie, true
	case v.WinnerLabel == v.Candidate:
		return stats.Win, true
	case v.WinnerLabel == v.Baseline:
		return stats.Loss, true
	}
	return 0, false
}

// Path is where the verdict of judge model at seed on a pair lives.
func Path(dir, task string, index int, candidate, model string, seed int64) string {
	return filepath.Join(dir, VerdictsDir, task, fmt.Sprintf("%02d-%s", index, candidate), fmt.Sprintf("%s-%d.json", model, seed))
}

// ReadVerdicts reads every verdict file under dir/verdicts, in path order.
// A file that does not parse is an error naming it.
func ReadVerdicts(dir string) ([]Verdict, error) {
	var out []Verdict
	root := filepath.Join(dir, VerdictsDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return fs.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		v, err := readVerdict(p)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pair() < out[j].Pair() })
	return out, err
}

func readVerdict(p string) (Verdict, error) {
	var v Verdict
	fi, err := os.Lstat(p)
	if err != nil {
		return v, fmt.Errorf("verdict %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > MaxVerdictBytes {
		return v, fmt.Errorf("verdict %s: not a regular file under %d bytes", p, MaxVerdictBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return v, fmt.Errorf("verdict %s: %w", p, err)
	}
	v, err = ParseVerdict(b)
	if err != nil {
		return v, fmt.Errorf("verdict %s: %w", p, err)
	}
	return v, nil
}

// ParseVerdict decodes one verdict file and checks that it names its pair.
func ParseVerdict(b []byte) (Verdict, error) {
	var v Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("parse: %w", err)
	}
	switch {
	case v.Task == "" || v.Candidate == "" || v.Baseline == "" || v.Model == "":
		return v, fmt.Errorf("verdict names no task, candidate, baseline or judge model")
	case v.Candidate == v.Baseline:
		return v, fmt.Errorf("verdict compares %s with itself", v.Candidate)
	case v.Index < 0:
		return v, fmt.Errorf("verdict index %d is negative", v.Index)
	case v.CostUSD < 0 || v.PromptTokens < 0 || v.CompletionTokens < 0:
		return v, fmt.Errorf("verdict has a negative cost or token count")
	}
	return v, nil
}

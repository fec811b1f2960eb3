package search

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/searchfmt"
)

// ConfigFile is the frozen config of a search folder.
const ConfigFile = searchfmt.ConfigFile

// ErrConfigChanged is returned when a search is resumed with another
// config than the one its folder was started with.
var ErrConfigChanged = errors.New("search config differs from the folder's")

// FrozenConfig is what a search folder remembers of its config: every
// setting that changes what a verdict or design means. Iterations is not
// in it: a finished search may be continued with more.
type FrozenConfig struct {
	TaskID         string `json:"task_id"`
	Judging        string `json:"judging"`
	Judgments      int    `json:"judgments"`
	JudgeRetries   int    `json:"judge_retries"`
	JudgeMode      string `json:"judge_mode"`
	Model          string `json:"model"`
	JudgeModel     string `json:"judge_model"`
	OptimizerModel string `json:"optimizer_model"`
	Seed           int64  `json:"seed"`
	// QueryTemplate is the SHA-256 of the task's query template; empty
	// when it has none.
	QueryTemplate string `json:"query_template_sha256,omitempty"`
	// The optimizer prompt's toggles, flat (include_best_design, …).
	PromptOptions
}

// Frozen is the frozen part of a defaulted config.
func (c Config) Frozen() FrozenConfig {
	f := FrozenConfig{TaskID: c.TaskID, Judging: c.Rule, Judgments: c.Judgments, JudgeRetries: *c.JudgeRetries,
		JudgeMode: c.JudgeMode, Model: c.Model, JudgeModel: c.JudgeModel, OptimizerModel: c.OptimizerModel, Seed: c.Seed,
		PromptOptions: c.Opts}
	if c.Template != nil {
		f.QueryTemplate = fmt.Sprintf("%x", sha256.Sum256([]byte(c.Template.Raw)))
	}
	return f
}

// ReadFrozen reads a folder's frozen config; ok is false when it has none
// (a new folder, or one the reference wrote).
func ReadFrozen(dir string) (FrozenConfig, bool, error) {
	var f FrozenConfig
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return f, false, nil
	}
	if err != nil {
		return f, false, fmt.Errorf("read search config: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, false, fmt.Errorf("parse %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	return f, true, nil
}

// Freeze writes want as the folder's config when it has none, and refuses
// (ErrConfigChanged, naming the keys) when it has another. A key the
// folder's config lacks (one written before the key existed) adopts the
// given value, and the config is rewritten with it.
func Freeze(dir string, want FrozenConfig) error {
	path := filepath.Join(dir, ConfigFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return writeFrozen(path, want)
	}
	if err != nil {
		return fmt.Errorf("read search config: %w", err)
	}
	var have map[string]any
	if err := json.Unmarshal(b, &have); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	diff, missing := frozenDiff(have, want)
	if len(diff) > 0 {
		return fmt.Errorf("%w: %s (start a new search, or resume with the folder's settings)", ErrConfigChanged, strings.Join(diff, ", "))
	}
	if missing {
		return writeFrozen(path, want)
	}
	return nil
}

func writeFrozen(path string, f FrozenConfig) error {
	b, _ := json.MarshalIndent(f, "", "  ")
	return workflow.WriteFileAtomic(path, append(b, '\n'))
}

func frozenDiff(have map[string]any, want FrozenConfig) (diff []string, missing bool) {
	var b map[string]any
	jb, _ := json.Marshal(want)
	_ = json.Unmarshal(jb, &b)
	for k, v := range b {
		old, ok := have[k]
		if !ok {
			missing = true
			continue
		}
		if fmt.Sprint(old) != fmt.Sprint(v) {
			diff = append(diff, fmt.Sprintf("%s (folder %v, now %v)", k, old, v))
		}
	}
	sort.Strings(diff)
	return diff, missing
}

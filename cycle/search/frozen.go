package search

import (
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
}

// Frozen is the frozen part of a defaulted config.
func (c Config) Frozen() FrozenConfig {
	return FrozenConfig{TaskID: c.TaskID, Judging: c.Rule, Judgments: c.Judgments, JudgeRetries: *c.JudgeRetries,
		JudgeMode: c.JudgeMode, Model: c.Model, JudgeModel: c.JudgeModel, OptimizerModel: c.OptimizerModel, Seed: c.Seed}
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
// (ErrConfigChanged, naming the keys) when it has another.
func Freeze(dir string, want FrozenConfig) error {
	have, ok, err := ReadFrozen(dir)
	if err != nil {
		return err
	}
	if !ok {
		b, _ := json.MarshalIndent(want, "", "  ")
		return workflow.WriteFileAtomic(filepath.Join(dir, ConfigFile), append(b, '\n'))
	}
	if diff := frozenDiff(have, want); len(diff) > 0 {
		return fmt.Errorf("%w: %s (start a new search, or resume with the folder's settings)", ErrConfigChanged, strings.Join(diff, ", "))
	}
	return nil
}

func frozenDiff(have, want FrozenConfig) []string {
	var a, b map[string]any
	ja, _ := json.Marshal(have)
	jb, _ := json.Marshal(want)
	_ = json.Unmarshal(ja, &a)
	_ = json.Unmarshal(jb, &b)
	var diff []string
	for k, v := range b {
		if fmt.Sprint(a[k]) != fmt.Sprint(v) {
			diff = append(diff, fmt.Sprintf("%s (folder %v, now %v)", k, a[k], v))
		}
	}
	sort.Strings(diff)
	return diff
}

package generation

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/mass-dev/mass/generationfmt"
)

// ConfigFile is a generation directory's frozen, resolved configuration.
const ConfigFile = generationfmt.ConfigFile

// Resolved is what a generation runs with, defaults filled in: written to
// generations/<g>/config.json on the first run, and every later run (a
// resume) must resolve to the same, or it is refused naming the keys
// (the reference's freeze_config).
type Resolved struct {
	G           int      `json:"generation"`
	Parent      string   `json:"parent"`
	Weights     string   `json:"parent_weights"`
	NewModel    string   `json:"served_name"`
	Tasks       []string `json:"tasks"`
	Seed        int64    `json:"seed"`
	RankSeed    int64    `json:"rank_seed"`
	Episodes    int      `json:"episodes"`
	MinSuccess  int      `json:"min_success"`
	Cap         int      `json:"cap"`
	Opponents   int      `json:"opponents"`
	Train       int      `json:"train"`
	Val         int      `json:"val"`
	Concurrency int      `json:"concurrency"`
	Attempts    int      `json:"attempts"`
	FP8         bool     `json:"fp8"`
	TrainSteps  int      `json:"train_steps"`
	Lenient     bool     `json:"lenient"`
	Recipe      *Recipe  `json:"training,omitempty"`
}

func (c *Config) resolved() Resolved {
	return Resolved{G: c.G, Parent: c.Parent.Name, Weights: c.Parent.Weights, NewModel: c.NewModel, Tasks: c.Tasks,
		Seed: c.Seed, RankSeed: c.RankSeed, Episodes: c.Episodes, MinSuccess: c.MinSuccess, Cap: c.Cap, Opponents: c.Opponents,
		Train: c.Train, Val: c.Val, Concurrency: c.Concurrency, Attempts: c.Attempts, FP8: c.FP8, TrainSteps: c.TrainSteps,
		Lenient: c.Lenient, Recipe: c.Recipe}
}

// freeze writes v to dir/ConfigFile, or compares it with what is there.
func freeze(dir string, v any) error {
	path := filepath.Join(dir, ConfigFile)
	var old map[string]any
	ok, err := readJSON(path, &old)
	if err != nil || !ok {
		if err == nil {
			err = writeJSON(path, v)
		}
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	var cur map[string]any
	if err := json.Unmarshal(b, &cur); err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	if keys := differing(old, cur); len(keys) > 0 {
		return fmt.Errorf("the configuration differs from the one frozen in %s: %s; start a new cycle (or generation) instead of resuming this one", path, strings.Join(keys, "; "))
	}
	return nil
}

// differing lists the keys whose values differ, as "key: old → new".
func differing(old, cur map[string]any) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]any{old, cur} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			if !reflect.DeepEqual(old[k], cur[k]) {
				ob, _ := json.Marshal(old[k])
				nb, _ := json.Marshal(cur[k])
				out = append(out, fmt.Sprintf("%s: %s → %s", k, ob, nb))
			}
		}
	}
	sort.Strings(out)
	return out
}

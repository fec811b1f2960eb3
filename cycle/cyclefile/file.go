// Package cyclefile reads a cycle configuration file (cycle.yaml): the
// paper's configs/paper.json sections — search, collection, ranking,
// training, tasks, models — and per-generation overrides, resolved into
// the params of a cycle (or generation) job and a printable plan.
package cyclefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// MaxBytes caps a configuration file.
const MaxBytes = 1 << 20

// File is a cycle configuration file.
type File struct {
	Count      int           `yaml:"count"` // G: how many generations (default 1)
	Models     Models        `yaml:"models"`
	Tasks      Tasks         `yaml:"tasks"`
	Search     Search        `yaml:"search"`
	Collection Collection    `yaml:"collection"`
	Ranking    Ranking       `yaml:"ranking"`
	Training   Training      `yaml:"training"`
	Overrides  map[int]Round `yaml:"generations"` // g → that generation's changes
}

// Models names the parent (model g−1 of the first generation) and the
// name each new generation is served under ("{g}" becomes g).
type Models struct {
	Parent     string `yaml:"parent"`
	ServedName string `yaml:"served_name"`
}

// Tasks are the splits: train tasks train, test tasks are held out for
// the evaluation, excluded ones do neither; the lists must be disjoint and
// agree with the specs' split:.
type Tasks struct {
	Train    []string `yaml:"train"`
	Test     []string `yaml:"test"`
	Excluded []string `yaml:"excluded"`
}

// Search is the inner loop: iterations and the judging rule.
type Search struct {
	Iterations int    `yaml:"iterations"`
	Judgments  int    `yaml:"judgments"`  // per comparison
	JudgeMode  string `yaml:"judge_mode"` // bundle or agent
	SeedBase   int64  `yaml:"seed_base"`
}

// Collection is the teacher episodes per task.
type Collection struct {
	Candidates     int    `yaml:"candidates"`
	TrainRanks     int    `yaml:"train_ranks"`
	ValidationRank int    `yaml:"validation_rank"`
	MinSuccess     int    `yaml:"min_success"` // default validation_rank
	Cap            int    `yaml:"cap"`         // runs per task at most, top-ups included
	Concurrency    int    `yaml:"concurrency"`
	Directive      string `yaml:"directive"` // the teacher directive (job param "directive")
	SeedBase       int64  `yaml:"seed_base"`
	Lenient        bool   `yaml:"lenient"` // render keeps episodes without a supervised window
}

// Ranking is the ring tournament.
type Ranking struct {
	Opponents int   `yaml:"opponents"`
	Seed      int64 `yaml:"seed"`
}

// Training is the render windows and the LoRA run.
type Training struct {
	Window         int      `yaml:"window"`
	ContextOverlap int      `yaml:"context_overlap"`
	Steps          int      `yaml:"steps"`
	LR             float64  `yaml:"lr"`
	WarmupSteps    int      `yaml:"warmup_steps"`
	MinLRRatio     float64  `yaml:"min_lr_ratio"`
	LoRAR          int      `yaml:"lora_r"`
	LoRAAlpha      float64  `yaml:"lora_alpha"`
	LoRADropout    *float64 `yaml:"lora_dropout"`
	Targets        []string `yaml:"targets"`
	SaveEvery      int      `yaml:"save_every"`
	ValEvery       int      `yaml:"val_every"`
	WindowsPerStep int      `yaml:"windows_per_step"`
	Seed           uint64   `yaml:"seed"`
}

// Round is a generation's overrides: the sections a generation may change
// (the search settings, tasks, models and seeds are the cycle's).
type Round struct {
	Collection yaml.Node `yaml:"collection"`
	Ranking    yaml.Node `yaml:"ranking"`
	Training   yaml.Node `yaml:"training"`
}

// Parse reads a configuration file; unknown keys are errors naming them.
func Parse(r io.Reader) (*File, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read cycle config: %w", err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("cycle config is over %d bytes", MaxBytes)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f File
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("cycle config is empty")
		}
		return nil, fmt.Errorf("cycle config: %w", err)
	}
	if f.Count == 0 {
		f.Count = 1
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return &f, nil
}

// check validates what the file alone can say.
func (f *File) check() error {
	switch {
	case f.Count < 1 || f.Count > 100:
		return fmt.Errorf("count %d: give 1 to 100 generations", f.Count)
	case len(f.Tasks.Train) == 0:
		return errors.New("tasks.train is empty: a cycle needs train tasks")
	}
	seen := map[string]string{}
	for _, l := range []struct {
		name string
		ids  []string
	}{{"train", f.Tasks.Train}, {"test", f.Tasks.Test}, {"excluded", f.Tasks.Excluded}} {
		for _, id := range l.ids {
			if prev, ok := seen[id]; ok {
				if prev == l.name {
					return fmt.Errorf("tasks.%s lists %s twice", l.name, id)
				}
				return fmt.Errorf("task %s is in tasks.%s and tasks.%s: the splits must be disjoint", id, prev, l.name)
			}
			seen[id] = l.name
		}
	}
	c := f.Collection
	if c.ValidationRank != 0 && c.ValidationRank != c.TrainRanks+1 {
		return fmt.Errorf("collection.validation_rank %d must immediately follow collection.train_ranks %d", c.ValidationRank, c.TrainRanks)
	}
	if c.Candidates != 0 && c.ValidationRank != 0 && c.Candidates < c.ValidationRank {
		return fmt.Errorf("collection.candidates %d is below collection.validation_rank %d", c.Candidates, c.ValidationRank)
	}
	for g := range f.Overrides {
		if g < 1 || g > f.Count {
			return fmt.Errorf("generations.%d: the cycle has generations 1..%d", g, f.Count)
		}
	}
	return nil
}

// Split is the split the file gives a task, "" if it lists it nowhere.
func (f *File) Split(id string) string {
	for name, ids := range map[string][]string{"train": f.Tasks.Train, "test": f.Tasks.Test, "excluded": f.Tasks.Excluded} {
		for _, x := range ids {
			if x == id {
				return name
			}
		}
	}
	return ""
}

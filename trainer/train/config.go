// Package train is mass-train's training loop: sampling windows, gradient
// accumulation, AdamW with warmup+cosine, validation, resumable checkpoints,
// the best checkpoint by validation loss, token accounting, a progress line
// and metrics.jsonl.
package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/internal/atomicfile"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
)

// Config is a training run. It is written to <out>/run.json; a resumed run
// must present the same values that shape the computation.
type Config struct {
	Model     string       `json:"model"`
	Data      string       `json:"data"`
	Val       string       `json:"val,omitempty"`
	Out       string       `json:"out"`
	Backend   string       `json:"backend"`
	Steps     int          `json:"steps"`
	Batch     int          `json:"batch"` // windows per micro-batch
	Accum     int          `json:"accum"` // micro-batches per optimizer step
	ValEvery  int          `json:"val_every"`
	CkptEvery int          `json:"ckpt_every"`
	MaxVal    int          `json:"max_val_windows,omitempty"`
	Keep      int          `json:"keep_checkpoints,omitempty"` // newest checkpoints kept; 0 keeps all
	Seed      uint64       `json:"seed"`
	LoRA      lora.Config  `json:"lora"`
	Optim     optim.Config `json:"optim"`
}

// The paper's run shape: 3 windows per optimizer step (one window per
// micro-batch, gradients accumulated), a checkpoint every 50 steps and a
// validation every 150.
const (
	DefaultBatch     = 1
	DefaultAccum     = 3
	DefaultCkptEvery = 50
	DefaultValEvery  = 150
	// DefaultSteps is mass-train's step count when none is given.
	DefaultSteps = 1624
	// DefaultKeep is how many newest checkpoints a run keeps.
	DefaultKeep = 3
	// DefaultSeed seeds LoRA initialisation, dropout and window order.
	DefaultSeed = 1
)

// DefaultConfig returns the paper's settings for a run of steps optimizer
// steps: 3 windows per step, checkpoint every 50, validate every 150, the
// LoRA and AdamW defaults of packages lora and optim.
func DefaultConfig(steps int) Config {
	return Config{Backend: "cpu", Steps: steps, Batch: DefaultBatch, Accum: DefaultAccum, ValEvery: DefaultValEvery, CkptEvery: DefaultCkptEvery, Seed: 1,
		LoRA: lora.DefaultConfig(), Optim: optim.DefaultConfig(steps)}
}

// Validate checks a configuration before any work starts.
func (c *Config) Validate() error {
	switch {
	case c.Model == "":
		return fmt.Errorf("no base model folder (--model)")
	case c.Data == "":
		return fmt.Errorf("no training rows (--data)")
	case c.Out == "":
		return fmt.Errorf("no output folder (--out)")
	case c.Steps <= 0:
		return fmt.Errorf("steps %d must be positive", c.Steps)
	case c.Batch <= 0 || c.Accum <= 0:
		return fmt.Errorf("batch %d and accum %d must be positive", c.Batch, c.Accum)
	case c.Optim.LR <= 0:
		return fmt.Errorf("learning rate %v must be positive", c.Optim.LR)
	}
	return c.LoRA.Validate()
}

func (c *Config) fingerprint() string {
	d := *c
	d.Steps, d.Out, d.ValEvery, d.CkptEvery, d.Keep = 0, "", 0, 0, 0
	b, _ := json.Marshal(d)
	return string(b)
}

// writeRunConfig records the config, or checks that a resumed run matches it.
func writeRunConfig(c *Config) (resume bool, err error) {
	p := filepath.Join(c.Out, "run.json")
	if b, err := os.ReadFile(p); err == nil {
		var old Config
		if err := json.Unmarshal(b, &old); err != nil {
			return false, fmt.Errorf("parse %s: %w", p, err)
		}
		if old.fingerprint() != c.fingerprint() {
			return false, fmt.Errorf("%s was started with different settings; use a new --out or the same flags\n was: %s\n now: %s", c.Out, old.fingerprint(), c.fingerprint())
		}
		resume = true
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	return resume, writeAtomic(p, append(b, '\n'))
}

func writeAtomic(path string, b []byte) error { return atomicfile.Write(path, b, 0o644) }

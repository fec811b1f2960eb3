package jobwire

import (
	"fmt"
	"regexp"
	"strings"
)

// Recipe is the training section of a generation: the render windows and
// every mass-train knob the paper sets (configs/paper.json "training").
// Zero values leave mass-train's (and the renderer's) defaults, which are
// the paper's; Dropout is a pointer because 0 is a valid choice.
type Recipe struct {
	Window         int      `json:"window,omitempty"`           // tokens per window (render; default 49152)
	ContextOverlap int      `json:"context_overlap,omitempty"`  // masked earlier context per window (render; default 8192)
	LR             float64  `json:"lr,omitempty"`               // peak learning rate (--lr)
	WarmupSteps    int      `json:"warmup_steps,omitempty"`     // --warmup
	MinLRRatio     float64  `json:"min_lr_ratio,omitempty"`     // final lr / peak, cosine (--floor)
	LoRAR          int      `json:"lora_r,omitempty"`           // --rank
	LoRAAlpha      float64  `json:"lora_alpha,omitempty"`       // --alpha
	LoRADropout    *float64 `json:"lora_dropout,omitempty"`     // --dropout
	Targets        []string `json:"targets,omitempty"`          // LoRA target modules (--targets)
	SaveEvery      int      `json:"save_every,omitempty"`       // --ckpt-every
	ValEvery       int      `json:"val_every,omitempty"`        // --val-every
	WindowsPerStep int      `json:"windows_per_step,omitempty"` // --batch 1 --accum N
	Seed           uint64   `json:"seed,omitempty"`             // --seed
}

var moduleName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Validate checks the recipe's values.
func (r *Recipe) Validate() error {
	if r == nil {
		return nil
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"window", r.Window}, {"context_overlap", r.ContextOverlap}, {"warmup_steps", r.WarmupSteps}, {"lora_r", r.LoRAR},
		{"save_every", r.SaveEvery}, {"val_every", r.ValEvery}, {"windows_per_step", r.WindowsPerStep}} {
		if c.v < 0 {
			return fmt.Errorf("training.%s %d must not be negative", c.name, c.v)
		}
	}
	switch {
	case r.Window > 0 && r.ContextOverlap >= r.Window:
		return fmt.Errorf("training.context_overlap %d must be below training.window %d", r.ContextOverlap, r.Window)
	case r.LR < 0 || r.LR > 1:
		return fmt.Errorf("training.lr %g must be in (0, 1]", r.LR)
	case r.MinLRRatio < 0 || r.MinLRRatio > 1:
		return fmt.Errorf("training.min_lr_ratio %g must be in [0, 1]", r.MinLRRatio)
	case r.LoRAAlpha < 0:
		return fmt.Errorf("training.lora_alpha %g must not be negative", r.LoRAAlpha)
	case r.LoRADropout != nil && (*r.LoRADropout < 0 || *r.LoRADropout >= 1):
		return fmt.Errorf("training.lora_dropout %g must be in [0, 1)", *r.LoRADropout)
	}
	for _, t := range r.Targets {
		if !moduleName.MatchString(t) {
			return fmt.Errorf("training.targets: %q is not a module name (q_proj, down_proj, …)", t)
		}
	}
	return nil
}

// Args are mass-train train's flags for the recipe's set knobs.
func (r *Recipe) Args() []string {
	if r == nil {
		return nil
	}
	var a []string
	add := func(flag string, v any, set bool) {
		if set {
			a = append(a, "--"+flag, fmt.Sprint(v))
		}
	}
	add("lr", r.LR, r.LR > 0)
	add("warmup", r.WarmupSteps, r.WarmupSteps > 0)
	add("floor", r.MinLRRatio, r.MinLRRatio > 0)
	add("rank", r.LoRAR, r.LoRAR > 0)
	add("alpha", r.LoRAAlpha, r.LoRAAlpha > 0)
	if r.LoRADropout != nil {
		add("dropout", *r.LoRADropout, true)
	}
	if len(r.Targets) > 0 {
		add("targets", strings.Join(r.Targets, ","), true)
	}
	add("ckpt-every", r.SaveEvery, r.SaveEvery > 0)
	add("val-every", r.ValEvery, r.ValEvery > 0)
	if r.WindowsPerStep > 0 {
		a = append(a, "--batch", "1", "--accum", fmt.Sprint(r.WindowsPerStep))
	}
	add("seed", r.Seed, r.Seed > 0)
	return a
}

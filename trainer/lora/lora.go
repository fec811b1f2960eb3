// Package lora holds LoRA adapters: configuration (rank, alpha, dropout,
// rsLoRA, target modules), the named fp32 A/B parameters with their gradients,
// and PEFT's initialization (A kaiming-uniform with a=√5, B zeros).
package lora

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/mass-dev/mass/trainer/model"
)

// Modules are the projections LoRA can target, in PEFT's names.
var Modules = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// LinearModules are the Gated DeltaNet projections of a Qwen3.5/3.6 hybrid
// that LoRA can target (the paper's reference adds them to Modules).
var LinearModules = []string{"in_proj_qkv", "in_proj_z", "out_proj"}

// AllModules is Modules then LinearModules: every target this package knows.
func AllModules() []string { return append(slices.Clone(Modules), LinearModules...) }

// HybridTargets are the reference's targets on a hybrid model: all of AllModules.
func HybridTargets() []string { return AllModules() }

// Exists reports whether layer l of the model has the projection: dense
// layers have Modules; a hybrid's full-attention layers have Modules and its
// Gated DeltaNet layers the MLP's and LinearModules.
func Exists(c *model.Config, layer int, module string) bool {
	lin := slices.Contains(LinearModules, module)
	if c.Hybrid == nil {
		return !lin
	}
	switch module {
	case "gate_proj", "up_proj", "down_proj":
		return true
	}
	return lin == c.IsLinear(layer)
}

// Defaults are the paper's settings.
const (
	DefaultRank    = 64
	DefaultAlpha   = 128
	DefaultDropout = 0.05
)

// Config describes an adapter.
type Config struct {
	Rank    int      `json:"r"`
	Alpha   float64  `json:"lora_alpha"`
	Dropout float64  `json:"lora_dropout"`
	RSLoRA  bool     `json:"use_rslora"`
	Targets []string `json:"target_modules"`
	// RankPattern and AlphaPattern are PEFT's per-module overrides, set only
	// for adapters read from PEFT files (RankOf, ScalingOf).
	RankPattern  Patterns `json:"rank_pattern,omitempty"`
	AlphaPattern Patterns `json:"alpha_pattern,omitempty"`
}

// DefaultConfig returns rank 64, alpha 128, dropout 0.05 on all seven modules.
func DefaultConfig() Config {
	return Config{Rank: DefaultRank, Alpha: DefaultAlpha, Dropout: DefaultDropout, Targets: slices.Clone(Modules)}
}

// Scaling is alpha/r, or alpha/√r with rsLoRA.
func (c Config) Scaling() float64 {
	if c.RSLoRA {
		return c.Alpha / math.Sqrt(float64(c.Rank))
	}
	return c.Alpha / float64(c.Rank)
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Rank <= 0 {
		return fmt.Errorf("lora rank %d must be positive", c.Rank)
	}
	if c.Dropout < 0 || c.Dropout >= 1 {
		return fmt.Errorf("lora dropout %v must be in [0, 1)", c.Dropout)
	}
	if len(c.Targets) == 0 {
		return fmt.Errorf("lora needs at least one target module (from %s)", strings.Join(Modules, ","))
	}
	for _, t := range c.Targets {
		if !slices.Contains(AllModules(), t) {
			return fmt.Errorf("unknown lora target %q (want some of %s)", t, strings.Join(AllModules(), ","))
		}
	}
	if err := c.RankPattern.validate("rank_pattern", true); err != nil {
		return err
	}
	return c.AlphaPattern.validate("alpha_pattern", false)
}

// Targets reports whether the module is adapted.
func (c Config) Has(module string) bool { return slices.Contains(c.Targets, module) }

// Param is one trainable fp32 tensor with its gradient buffer.
type Param struct {
	Name  string
	Shape []int
	Data  []float32
	Grad  []float32
}

// Adapter is the set of LoRA parameters of one model.
type Adapter struct {
	Config Config
	Params []*Param // sorted by name
	byName map[string]*Param
	// nested: the model keeps its decoder under model.language_model. (a
	// Qwen3.5/3.6 checkpoint), so PEFT files name parameters there.
	nested bool
}

// ModulePath returns "self_attn.q_proj" or "mlp.up_proj".
func ModulePath(module string) string {
	switch module {
	case "gate_proj", "up_proj", "down_proj":
		return "mlp." + module
	case "in_proj_qkv", "in_proj_z", "out_proj":
		return "linear_attn." + module
	}
	return "self_attn." + module
}

// AName and BName return the parameter names, e.g.
// model.layers.0.self_attn.q_proj.lora_A.weight.
func AName(layer int, module string) string {
	return model.LayerName(layer, ModulePath(module)+".lora_A.weight")
}

// BName is AName for B.
func BName(layer int, module string) string {
	return model.LayerName(layer, ModulePath(module)+".lora_B.weight")
}

// Dims returns (in, out) features of a module.
func Dims(c *model.Config, module string) (int, int) {
	d := c.HiddenSize
	switch module {
	case "q_proj":
		return d, c.QProjOut()
	case "k_proj", "v_proj":
		return d, c.KVDim()
	case "o_proj":
		return c.QDim(), d
	case "gate_proj", "up_proj":
		return d, c.IntermediateSize
	case "down_proj":
		return c.IntermediateSize, d
	}
	if h := c.Hybrid; h != nil {
		switch module {
		case "in_proj_qkv":
			return d, h.ConvDim()
		case "in_proj_z":
			return d, h.LinearValueWidth()
		case "out_proj":
			return h.LinearValueWidth(), d
		}
	}
	panic("lora: unknown module " + module)
}

// New creates an adapter with PEFT initialization from seed: A ~ U(-1/√in,
// 1/√in) (kaiming-uniform with a=√5), B = 0.
func New(cfg Config, mc *model.Config, seed uint64) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f7261))
	a := &Adapter{Config: cfg, byName: map[string]*Param{}, nested: mc.Hybrid != nil && mc.Hybrid.Nested}
	used := map[string]bool{}
	for l := 0; l < mc.NumLayers; l++ {
		for _, m := range AllModules() {
			if !cfg.Has(m) || !Exists(mc, l, m) {
				continue
			}
			used[m] = true
			in, out := Dims(mc, m)
			rank := cfg.RankOf(l, m)
			pa := newParam(AName(l, m), rank, in)
			bound := 1 / math.Sqrt(float64(in))
			for i := range pa.Data {
				pa.Data[i] = float32((2*rng.Float64() - 1) * bound)
			}
			a.add(pa)
			a.add(newParam(BName(l, m), out, rank))
		}
	}
	for _, t := range cfg.Targets {
		if !used[t] {
			return nil, fmt.Errorf("lora target %q is no projection of this model", t)
		}
	}
	a.sort()
	return a, nil
}

func newParam(name string, rows, cols int) *Param {
	return &Param{Name: name, Shape: []int{rows, cols}, Data: make([]float32, rows*cols), Grad: make([]float32, rows*cols)}
}

func (a *Adapter) add(p *Param) {
	if a.byName == nil {
		a.byName = map[string]*Param{}
	}
	a.Params = append(a.Params, p)
	a.byName[p.Name] = p
}

func (a *Adapter) sort() {
	slices.SortFunc(a.Params, func(x, y *Param) int { return strings.Compare(x.Name, y.Name) })
}

// Param returns a parameter by name, or nil.
func (a *Adapter) Param(name string) *Param { return a.byName[name] }

// ZeroGrad clears every gradient.
func (a *Adapter) ZeroGrad() {
	for _, p := range a.Params {
		clear(p.Grad)
	}
}

// NumParams counts trainable values.
func (a *Adapter) NumParams() int {
	n := 0
	for _, p := range a.Params {
		n += len(p.Data)
	}
	return n
}

// Package optim holds the trainer's optimizer: AdamW with fp32 state (the
// arithmetic of torch.optim.AdamW), the warmup-then-cosine learning-rate
// schedule with a floor, and global gradient-norm clipping.
package optim

import (
	"fmt"
	"math"

	"github.com/mass-dev/mass/trainer/lora"
)

// Defaults are the paper's settings.
const (
	DefaultLR          = 3e-5
	DefaultWarmup      = 5
	DefaultFloor       = 0.1
	DefaultWeightDecay = 0.0
	DefaultClip        = 1.0
	DefaultBeta1       = 0.9
	DefaultBeta2       = 0.95 // the paper's AdamW betas are (0.9, 0.95)
	DefaultEps         = 1e-8
)

// Config holds the optimizer and schedule settings.
type Config struct {
	LR          float64 `json:"lr"`
	Warmup      int     `json:"warmup"`
	TotalSteps  int     `json:"total_steps"`
	Floor       float64 `json:"floor"` // final lr = Floor × LR
	WeightDecay float64 `json:"weight_decay"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	Clip        float64 `json:"clip"` // max global gradient norm; 0 disables
}

// DefaultConfig returns the paper's optimizer for a run of total steps.
func DefaultConfig(total int) Config {
	return Config{LR: DefaultLR, Warmup: DefaultWarmup, TotalSteps: total, Floor: DefaultFloor,
		WeightDecay: DefaultWeightDecay, Beta1: DefaultBeta1, Beta2: DefaultBeta2, Eps: DefaultEps, Clip: DefaultClip}
}

// LRAt is the learning rate of 0-based step s: linear warmup to LR over
// Warmup steps, then cosine decay to Floor×LR at TotalSteps.
func (c Config) LRAt(s int) float64 {
	if s < c.Warmup {
		return c.LR * float64(s+1) / float64(c.Warmup)
	}
	span := c.TotalSteps - c.Warmup
	if span < 1 {
		span = 1
	}
	p := math.Min(1, float64(s-c.Warmup)/float64(span))
	return c.LR * (c.Floor + (1-c.Floor)*0.5*(1+math.Cos(math.Pi*p)))
}

// AdamW is decoupled-weight-decay Adam with fp32 moments.
type AdamW struct {
	Cfg   Config
	Steps int64
	M, V  map[string][]float32
}

// NewAdamW creates zeroed moments for the adapter's parameters.
func NewAdamW(cfg Config, a *lora.Adapter) *AdamW {
	o := &AdamW{Cfg: cfg, M: map[string][]float32{}, V: map[string][]float32{}}
	for _, p := range a.Params {
		o.M[p.Name] = make([]float32, len(p.Data))
		o.V[p.Name] = make([]float32, len(p.Data))
	}
	return o
}

// Step applies one update with learning rate lr to every parameter.
func (o *AdamW) Step(params []*lora.Param, lr float64) error {
	o.Steps++
	c := o.Cfg
	bc1 := 1 - math.Pow(c.Beta1, float64(o.Steps))
	bc2 := math.Sqrt(1 - math.Pow(c.Beta2, float64(o.Steps)))
	stepSize := float32(lr / bc1)
	decay := float32(1 - lr*c.WeightDecay)
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	eps, bc2f := float32(c.Eps), float32(bc2)
	for _, p := range params {
		m, v := o.M[p.Name], o.V[p.Name]
		if len(m) != len(p.Data) || len(v) != len(p.Data) {
			return fmt.Errorf("optimizer state for %s has %d values, parameter %d", p.Name, len(m), len(p.Data))
		}
		for i, g := range p.Grad {
			p.Data[i] *= decay
			m[i] += (g - m[i]) * (1 - b1)
			v[i] = v[i]*b2 + (1-b2)*g*g
			den := float32(math.Sqrt(float64(v[i])))/bc2f + eps
			p.Data[i] -= stepSize * m[i] / den
		}
	}
	return nil
}

// ClipGradNorm scales gradients so their global L2 norm is at most max (as
// torch.nn.utils.clip_grad_norm_) and returns the norm before clipping.
func ClipGradNorm(params []*lora.Param, max float64) float64 {
	var ss float64
	for _, p := range params {
		for _, g := range p.Grad {
			ss += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(ss)
	if max <= 0 {
		return norm
	}
	if coef := max / (norm + 1e-6); coef < 1 {
		for _, p := range params {
			for i := range p.Grad {
				p.Grad[i] *= float32(coef)
			}
		}
	}
	return norm
}

// Package refbackend is mass-train's reference backend ("reference"): the Qwen decoder with LoRA
// built as a gorgonia expression graph in float64, differentiated
// symbolically, with custom ops (RMSNorm, RoPE, attention, SwiGLU, masked
// cross-entropy) that carry their own gradients. Qwen3.5/3.6 hybrids add the
// Gated DeltaNet ops (causal conv, L2 norm, the recurrent gated delta rule,
// gated RMSNorm) and the gated, partially rotary full attention (hybrid.go).
package refbackend

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"gorgonia.org/tensor"
)

// Name is the backend's name on the mass-train command line.
const Name = "reference"

var _ trainer.Backend = (*Backend)(nil)

type layerWeights struct {
	inNorm, postNorm, qNorm, kNorm []float64
	bq, bk, bv                     []float64
	w                              map[string]*tensor.Dense // module -> W^T [in,out]
	hy                             *hybridWeights           // Qwen3.5/3.6 layers only
}

// Backend is the gorgonia CPU backend. It keeps the frozen weights in float64,
// transposed for x·Wᵀ products.
type Backend struct {
	cfg       *model.Config
	adapter   *lora.Adapter
	embed     *model.Tensor
	layers    []layerWeights
	finalNorm []float64
	head      *tensor.Dense // [D, V]
	headRows  *tensor.Dense // [V, D]
}

// New prepares the frozen weights of m for a graph per window.
func New(m *model.Model, a *lora.Adapter) (trainer.Backend, error) {
	if a == nil {
		return nil, fmt.Errorf("reference backend needs an adapter (may have no trainable modules)")
	}
	c := m.Config
	b := &Backend{cfg: c, adapter: a, embed: m.Get("model.embed_tokens.weight")}
	b.finalNorm = f64(m.Get("model.norm.weight").Data)
	if c.Hybrid != nil {
		b.finalNorm = onePlus(m.Get("model.norm.weight").Data)
	}
	b.head = transposed(m.LMHead())
	hd := m.LMHead()
	b.headRows = tensor.New(tensor.WithShape(hd.Shape...), tensor.WithBacking(f64(hd.Data)))
	for l := 0; l < c.NumLayers; l++ {
		if c.Hybrid != nil {
			b.layers = append(b.layers, newHybridLayer(m, l))
			continue
		}
		get := func(s string) *model.Tensor { return m.Get(model.LayerName(l, s)) }
		lw := layerWeights{
			inNorm:   f64(get("input_layernorm.weight").Data),
			postNorm: f64(get("post_attention_layernorm.weight").Data),
			w:        map[string]*tensor.Dense{},
		}
		for _, mod := range lora.Modules {
			lw.w[mod] = transposed(get(lora.ModulePath(mod) + ".weight"))
		}
		if c.AttentionBias {
			lw.bq = f64(get("self_attn.q_proj.bias").Data)
			lw.bk = f64(get("self_attn.k_proj.bias").Data)
			lw.bv = f64(get("self_attn.v_proj.bias").Data)
		}
		if c.Arch == model.Qwen3 {
			lw.qNorm = f64(get("self_attn.q_norm.weight").Data)
			lw.kNorm = f64(get("self_attn.k_norm.weight").Data)
		}
		b.layers = append(b.layers, lw)
	}
	return b, nil
}

// Name implements trainer.Backend.
func (b *Backend) Name() string { return Name }

// Close implements trainer.Backend.
func (b *Backend) Close() error { b.layers, b.head, b.headRows = nil, nil, nil; return nil }

// ForwardBackward implements trainer.Backend.
func (b *Backend) ForwardBackward(ctx context.Context, batch trainer.Batch, scale float64) ([]trainer.WindowLoss, error) {
	out := make([]trainer.WindowLoss, len(batch.Windows))
	for i, w := range batch.Windows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := b.run(w, runOpts{grad: true, dropoutSeed: mix(batch.Seed, uint64(i)), gradScale: scale})
		if err != nil {
			return nil, fmt.Errorf("window %d: %w", i, err)
		}
		out[i] = r.loss
	}
	return out, nil
}

// Loss implements trainer.Backend.
func (b *Backend) Loss(ctx context.Context, windows []trainer.Window) ([]trainer.WindowLoss, error) {
	out := make([]trainer.WindowLoss, len(windows))
	for i, w := range windows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := b.run(w, runOpts{})
		if err != nil {
			return nil, fmt.Errorf("window %d: %w", i, err)
		}
		out[i] = r.loss
	}
	return out, nil
}

// Logits implements trainer.Backend.
func (b *Backend) Logits(ctx context.Context, w trainer.Window) ([]float32, error) {
	r, err := b.run(w, runOpts{logits: true})
	if err != nil {
		return nil, err
	}
	return r.logits, nil
}

func f64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// transposed returns Wᵀ of a [out,in] weight as a float64 [in,out] tensor.
func transposed(t *model.Tensor) *tensor.Dense {
	rows, cols := t.Shape[0], t.Shape[1]
	d := make([]float64, rows*cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			d[c*rows+r] = float64(t.Data[r*cols+c])
		}
	}
	return tensor.New(tensor.WithShape(cols, rows), tensor.WithBacking(d))
}

// mix derives an independent 64-bit stream id (splitmix64 finalizer).
func mix(a, b uint64) uint64 {
	z := a ^ (b+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

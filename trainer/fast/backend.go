package fast

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// Name is the backend's name on the mass-train command line.
const Name = "cpu"

var _ trainer.Backend = (*Backend)(nil)

// proj is one frozen projection [out,in] with its optional bias and LoRA.
type proj struct {
	module  string
	in, out int
	w       []float32 // [out,in], the model's own tensor, or nil when wh holds it
	wh      []uint16  // [out,in] bf16 (model.LoadOptions.KeepBF16)
	bias    []float32
	a, b    *lora.Param // nil when the module is not adapted
	scaling float32     // alpha/r of this module
}

type layer struct {
	inNorm, postNorm, qNorm, kNorm []float32
	q, k, v, o, gate, up, down     proj
	hy                             *hybridLayer // Qwen3.5/3.6 only
}

// Backend is the fast CPU backend.
type Backend struct {
	cfg       *model.Config
	adapter   *lora.Adapter
	embed     []float32 // [V,D]
	head      []float32 // [V,D]
	embedH    []uint16  // [V,D] bf16, set instead of embed
	headH     []uint16  // [V,D] bf16, set instead of head
	finalNorm []float32
	layers    []layer
}

// New wraps the weights of m for training a: float32 matrices as they are (no copy),
// bf16-exact ones (a BF16 checkpoint) as bf16 copies, so that m's float32 tensors can be
// dropped by the caller (matOf).
func New(m *model.Model, a *lora.Adapter) (trainer.Backend, error) {
	if a == nil {
		return nil, fmt.Errorf("cpu backend needs an adapter (may have no trainable modules)")
	}
	c := m.Config
	if c.Arch != model.Qwen2 && c.Arch != model.Qwen3 && c.Arch != model.Qwen35 {
		return nil, fmt.Errorf("%w: the cpu backend runs qwen2, qwen3 and the qwen3.5 hybrid, not %s", model.ErrUnsupported, c.Arch)
	}
	initBLAS()
	b := &Backend{cfg: c, adapter: a, finalNorm: m.Get("model.norm.weight").Data}
	b.embed, b.embedH = matOf(m.Get("model.embed_tokens.weight"))
	b.head, b.headH = matOf(m.LMHead())
	if c.Hybrid != nil {
		b.finalNorm = onePlus(b.finalNorm)
	}
	for l := 0; l < c.NumLayers; l++ {
		if c.Hybrid != nil {
			ly, err := newHybridLayer(m, a, l)
			if err != nil {
				return nil, err
			}
			b.layers = append(b.layers, ly)
			continue
		}
		get := func(s string) []float32 { return m.Get(model.LayerName(l, s)).Data }
		ly := layer{inNorm: get("input_layernorm.weight"), postNorm: get("post_attention_layernorm.weight")}
		ps := []*proj{&ly.q, &ly.k, &ly.v, &ly.o, &ly.gate, &ly.up, &ly.down}
		for i, mod := range lora.Modules {
			p := ps[i]
			p.module = mod
			p.in, p.out = lora.Dims(c, mod)
			p.w, p.wh = matOf(m.Get(model.LayerName(l, lora.ModulePath(mod)+".weight")))
			if a.Config.Has(mod) {
				p.a, p.b = a.Param(lora.AName(l, mod)), a.Param(lora.BName(l, mod))
				p.scaling = float32(a.Config.ScalingOf(l, mod))
				if p.a == nil || p.b == nil {
					return nil, fmt.Errorf("adapter lacks layer %d %s", l, mod)
				}
			}
		}
		if c.AttentionBias {
			ly.q.bias, ly.k.bias, ly.v.bias = get("self_attn.q_proj.bias"), get("self_attn.k_proj.bias"), get("self_attn.v_proj.bias")
		}
		if c.Arch == model.Qwen3 {
			ly.qNorm, ly.kNorm = get("self_attn.q_norm.weight"), get("self_attn.k_norm.weight")
		}
		b.layers = append(b.layers, ly)
	}
	// The loader's file buffers are garbage now; hand them back before the
	// first window, so that they never add to the peak.
	debug.FreeOSMemory()
	return b, nil
}

// Name implements trainer.Backend.
func (b *Backend) Name() string { return Name }

// Close implements trainer.Backend.
func (b *Backend) Close() error {
	b.layers, b.embed, b.head, b.embedH, b.headH = nil, nil, nil, nil, nil
	return nil
}

// ForwardBackward implements trainer.Backend.
func (b *Backend) ForwardBackward(ctx context.Context, batch trainer.Batch, scale float64) ([]trainer.WindowLoss, error) {
	out := make([]trainer.WindowLoss, len(batch.Windows))
	for i, w := range batch.Windows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r, err := b.run(w, runOpts{grad: true, dropoutSeed: mix(batch.Seed, uint64(i)), gradScale: float32(scale)})
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

// mix derives an independent 64-bit stream id (splitmix64 finalizer), as the
// reference backend does, so that both draw the same dropout masks.
func mix(a, b uint64) uint64 {
	z := a ^ (b+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

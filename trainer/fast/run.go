package fast

import (
	"fmt"
	"math"

	"github.com/mass-dev/mass/trainer"
)

type runOpts struct {
	grad        bool
	logits      bool
	dropoutSeed uint64
	gradScale   float32
}

type runResult struct {
	loss   trainer.WindowLoss
	logits []float32
}

// run is one window's pass.
type run struct {
	b      *Backend
	t      int
	opts   runOpts
	rope   *rope
	attn   attnShape
	labels []int32
}

// acts are what one layer's backward needs from its forward.
type acts struct {
	xin, h1, qraw, kraw, q, k, v, ao, lse, x1, h2, g, up, x2 []float32
	u                                                        [7][]float32 // LoRA u per module, in lora.Modules order
	hy                                                       *hybridActs
}

func (b *Backend) run(w trainer.Window, opts runOpts) (runResult, error) {
	c := b.cfg
	t := len(w.InputIDs)
	if t == 0 || len(w.Labels) != t {
		return runResult{}, fmt.Errorf("window has %d tokens and %d labels", t, len(w.Labels))
	}
	d := c.HiddenSize
	x := make([]float32, t*d)
	for i, id := range w.InputIDs {
		if id < 0 || int(id) >= c.VocabSize {
			return runResult{}, fmt.Errorf("token id %d at %d outside vocabulary of %d", id, i, c.VocabSize)
		}
		b.embedRow(x[i*d:(i+1)*d], int(id))
	}
	for i, l := range w.Labels {
		if l != trainer.IgnoreIndex && (l < 0 || int(l) >= c.VocabSize) {
			return runResult{}, fmt.Errorf("label %d at %d outside vocabulary of %d", l, i, c.VocabSize)
		}
	}
	rot := c.HeadDim
	if c.Hybrid != nil {
		rot = c.Hybrid.RotaryDim
	}
	r := &run{b: b, t: t, opts: opts, rope: newPartialRope(t, c.HeadDim, rot, c.RopeTheta), labels: w.Labels,
		attn: attnShape{t: t, nh: c.NumHeads, nkv: c.NumKVHeads, hd: c.HeadDim, scale: float32(1 / math.Sqrt(float64(c.HeadDim)))}}
	var saved []*acts
	for l := range b.layers {
		a := r.layerForward(l, x)
		x = a.out()
		if opts.grad {
			saved = append(saved, a)
		}
	}
	hf := rmsNorm(x, b.finalNorm, c.RMSNormEps)
	if opts.logits {
		return r.allLogits(hf)
	}
	loss, n, dhf := r.lmHead(hf, opts.grad)
	res := runResult{loss: trainer.WindowLoss{Loss: loss, Tokens: n}}
	if !opts.grad || n == 0 {
		return res, nil
	}
	dx := rmsNormBack(x, b.finalNorm, dhf, c.RMSNormEps, nil)
	for l := len(b.layers) - 1; l >= 0; l-- {
		dx = r.layerBackward(l, saved[l], dx)
		saved[l] = nil
	}
	return res, nil
}

// out is the layer's output residual x1 + mlp.
func (a *acts) out() []float32 { return a.x2 }

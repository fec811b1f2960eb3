package fast

import (
	"math/rand/v2"
	"slices"

	"github.com/mass-dev/mass/trainer/lora"
)

// forward is y = x·Wᵀ (+ bias) (+ s·(dropout(x)·Aᵀ)·Bᵀ) for x [t,in]. It
// returns u = dropout(x)·Aᵀ [t,r], which backward needs, or nil.
func (r *run) linear(p *proj, layer int, x []float32) (y, u []float32) {
	t := r.t
	y = make([]float32, t*p.out)
	gemm(false, true, t, p.out, p.in, 1, x, p.in, p.weight(), p.in, 0, y, p.out)
	if p.bias != nil {
		parallelRows(t, func(r0, r1 int) {
			for i := r0; i < r1; i++ {
				row := y[i*p.out : (i+1)*p.out]
				for j, bj := range p.bias {
					row[j] += bj
				}
			}
		})
	}
	if p.a == nil {
		return y, nil
	}
	rank := p.a.Shape[0]
	xd := x
	if mask := r.mask(p, layer); mask != nil {
		xd = mulMask(x, mask)
	}
	u = make([]float32, t*rank)
	gemm(false, true, t, rank, p.in, 1, xd, p.in, p.a.Data, p.in, 0, u, rank)
	gemm(false, true, t, p.out, rank, p.scaling, u, rank, p.b.Data, rank, 1, y, p.out)
	return y, u
}

// linearBack adds dy·W (+ the LoRA path's part) into dx [t,in] (overwriting
// it when overwrite is set) and adds gradScale times the LoRA gradients into
// the adapter's Grad.
func (r *run) linearBack(p *proj, layer int, x, u, dy, dx []float32, overwrite bool) {
	t := r.t
	beta := float32(1)
	if overwrite {
		beta = 0
	}
	gemm(false, false, t, p.in, p.out, 1, dy, p.out, p.weight(), p.in, beta, dx, p.in)
	if p.a == nil {
		return
	}
	rank := p.a.Shape[0]
	s, gs := p.scaling, r.opts.gradScale
	// dB += gs·s·dyᵀ·u; du = s·dy·B; dA += gs·duᵀ·dropout(x); dx += dropout'(du·A).
	gemm(true, false, p.out, rank, t, gs*s, dy, p.out, u, rank, 1, p.b.Grad, rank)
	du := make([]float32, t*rank)
	gemm(false, false, t, rank, p.out, s, dy, p.out, p.b.Data, rank, 0, du, rank)
	mask := r.mask(p, layer)
	xd := x
	if mask != nil {
		xd = mulMask(x, mask)
	}
	gemm(true, false, rank, p.in, t, gs, du, rank, xd, p.in, 1, p.a.Grad, p.in)
	if mask == nil {
		gemm(false, false, t, p.in, rank, 1, du, rank, p.a.Data, p.in, 1, dx, p.in)
		return
	}
	tmp := make([]float32, t*p.in)
	gemm(false, false, t, p.in, rank, 1, du, rank, p.a.Data, p.in, 0, tmp, p.in)
	for i, m := range mask {
		dx[i] += tmp[i] * m
	}
}

// mask draws the dropout mask of one module's input exactly as the reference
// backend does (a PCG stream per window, layer and module, kept values scaled
// by 1/(1-p)), or returns nil when there is no dropout.
func (r *run) mask(p *proj, layer int) []float32 {
	prob := r.b.adapter.Config.Dropout
	if !r.opts.grad || prob <= 0 {
		return nil
	}
	mi := slices.Index(lora.AllModules(), p.module)
	rng := rand.New(rand.NewPCG(r.opts.dropoutSeed, mix(uint64(layer), uint64(mi))))
	keep := float32(1 / (1 - prob))
	m := make([]float32, r.t*p.in)
	for i := range m {
		if rng.Float64() >= prob {
			m[i] = keep
		}
	}
	return m
}

func mulMask(x, mask []float32) []float32 {
	out := make([]float32, len(x))
	for i, m := range mask {
		out[i] = x[i] * m
	}
	return out
}

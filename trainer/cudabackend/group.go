//go:build masscuda || masscudaemu

package cudabackend

import (
	"github.com/mass-dev/mass/cuda/cublaslt"
	"github.com/mass-dev/mass/cuda/devmem"
)

// loraGroup is the LoRA part of projections that read the same input (q/k/v, gate/up).
// Their A matrices lie back to back in the flat buffers (placeLoRA), so [A_1; …; A_n] is
// one [n·r, in] matrix: x·[A_1; …; A_n]ᵀ is one product giving every module's xa side by
// side in [T, n·r], dA of the whole group is one product, and so is the LoRA term of the
// input gradient, summed over the modules before it is rounded. Without dropout only:
// each module drops its own mask of x, so with dropout the inputs differ.
type loraGroup struct {
	mods    []int
	rank    int
	abf, ga devmem.Block // [n·r, in] bf16 copies and fp32 gradients of the stacked A
}

// newLoRAGroup returns the group of modules mods of one layer, or nil when one is not
// adapted or their A matrices are not contiguous (flat padding between them).
func newLoRAGroup(lo [nMods]*loraMod, mods ...int) *loraGroup {
	first := lo[mods[0]]
	if first == nil {
		return nil
	}
	g := &loraGroup{mods: mods, rank: first.rank}
	for i, mi := range mods {
		m := lo[mi]
		if m == nil || m.rank != first.rank || m.in != first.in {
			return nil
		}
		if i > 0 {
			prev := lo[mods[i-1]]
			if m.abf.Ptr != prev.abf.Ptr+uintptr(prev.abf.Size) || m.ga.Ptr != prev.ga.Ptr+uintptr(prev.ga.Size) {
				return nil
			}
		}
	}
	last := lo[mods[len(mods)-1]]
	g.abf = devmem.Block{Ptr: first.abf.Ptr, Size: int64(last.abf.Ptr-first.abf.Ptr) + last.abf.Size}
	g.ga = devmem.Block{Ptr: first.ga.Ptr, Size: int64(last.ga.Ptr-first.ga.Ptr) + last.ga.Size}
	return g
}

// grouped reports whether the projections ls run as group g: g exists and none drops.
func grouped(g *loraGroup, ls []linear) bool {
	if g == nil {
		return false
	}
	for _, l := range ls {
		if l.dropout > 0 || l.lo == nil {
			return false
		}
	}
	return true
}

// linFwdGroup computes ys[i] = x·W_iᵀ (+ b_i) + s·xa_i·B_iᵀ for the group's projections ls
// and returns xa = x·[A_1; …; A_n]ᵀ [T, n·r] (allocated in sc, kept for the backward).
func (b *Backend) linFwdGroup(sc *scope, g *loraGroup, ls []linear, ys []uintptr, x uintptr) (uintptr, error) {
	o := b.ops
	for i, l := range ls {
		if err := b.baseFwd(l, ys[i], x); err != nil {
			return 0, err
		}
	}
	t, in, r, nr := ls[0].T, ls[0].in, g.rank, len(ls)*g.rank
	xa, err := sc.bf16(t * nr)
	if err != nil {
		return 0, err
	}
	if err := o.Gemm(cublaslt.Gemm{TransB: true, M: t, N: nr, K: in, A: x, B: g.abf.Ptr, C: xa,
		CType: cublaslt.BF16, Alpha: 1}); err != nil {
		return 0, err
	}
	for i, l := range ls {
		if err := o.Gemm(cublaslt.Gemm{TransB: true, M: t, N: l.out, K: r, A: xa + uintptr(2*i*r), LDA: nr,
			B: l.lo.bbf.Ptr, C: ys[i], CType: cublaslt.BF16, Alpha: b.w.scaling, Beta: 1}); err != nil {
			return 0, err
		}
	}
	return xa, nil
}

// linBwdGroup writes dx = Σ_i dy_i·W_i + s·dxa·[A_1; …; A_n] with dxa_i = dy_i·B_i side by
// side in [T, n·r], and adds dB_i += s·dy_iᵀ·xa_i and d[A_1; …; A_n] += s·dxaᵀ·x.
func (b *Backend) linBwdGroup(tmp *scope, g *loraGroup, ls []linear, dx uintptr, dys []uintptr, x, xa uintptr) error {
	o, s := b.ops, b.w.scaling
	t, in, r, nr := ls[0].T, ls[0].in, g.rank, len(ls)*g.rank
	for i, l := range ls {
		if err := o.Gemm(cublaslt.Gemm{M: t, N: in, K: l.out, A: dys[i], B: l.w, C: dx,
			CType: cublaslt.BF16, Alpha: 1, Beta: beta(i)}); err != nil {
			return err
		}
	}
	dxa, err := tmp.bf16(t * nr)
	if err != nil {
		return err
	}
	for i, l := range ls {
		if err := o.Gemm(cublaslt.Gemm{TransA: true, M: l.out, N: r, K: t, A: dys[i], B: xa + uintptr(2*i*r), LDB: nr,
			C: l.lo.gb.Ptr, CType: cublaslt.F32, Alpha: s, Beta: 1}); err != nil {
			return err
		}
		if err := o.Gemm(cublaslt.Gemm{M: t, N: r, K: l.out, A: dys[i], B: l.lo.bbf.Ptr, C: dxa + uintptr(2*i*r), LDC: nr,
			CType: cublaslt.BF16, Alpha: 1}); err != nil {
			return err
		}
	}
	if err := o.Gemm(cublaslt.Gemm{TransA: true, M: nr, N: in, K: t, A: dxa, B: x, C: g.ga.Ptr,
		CType: cublaslt.F32, Alpha: s, Beta: 1}); err != nil {
		return err
	}
	return o.Gemm(cublaslt.Gemm{M: t, N: in, K: nr, A: dxa, B: g.abf.Ptr, C: dx, CType: cublaslt.BF16, Alpha: s, Beta: 1})
}

func beta(i int) float32 {
	if i == 0 {
		return 0
	}
	return 1
}

// The projections that read one input, in lora.Modules order.
var (
	qkvMods    = []int{mQ, mK, mV}
	gateUpMods = []int{mGate, mUp}
)

// projFwd runs the projections mods of layer l on x into ys: as group g (xa in a.xaG[gi])
// when it can, else one by one (xa in a.xa).
func (f *fwd) projFwd(sc, tmp *scope, g *loraGroup, l int, mods []int, ys []uintptr, x uintptr, a *acts, gi int) error {
	ls := f.lins(l, mods)
	if grouped(g, ls) {
		var err error
		a.xaG[gi], err = f.b.linFwdGroup(sc, g, ls, ys, x)
		return err
	}
	for i, mi := range mods {
		var err error
		if a.xa[mi], err = f.b.linFwd(sc, tmp, ls[i], ys[i], x); err != nil {
			return err
		}
	}
	return nil
}

// projBwd is projFwd's backward: dx = Σ over mods of each projection's input gradient.
func (f *fwd) projBwd(tmp *scope, g *loraGroup, l int, mods []int, dx uintptr, dys []uintptr, x uintptr, a *acts, gi int) error {
	ls := f.lins(l, mods)
	if grouped(g, ls) {
		return f.b.linBwdGroup(tmp, g, ls, dx, dys, x, a.xaG[gi])
	}
	for i, mi := range mods {
		if err := f.b.linBwd(tmp, ls[i], dx, i > 0, dys[i], x, a.xa[mi]); err != nil {
			return err
		}
	}
	return nil
}

func (f *fwd) lins(l int, mods []int) []linear {
	ls := make([]linear, len(mods))
	for i, mi := range mods {
		ls[i] = f.lin(l, mi)
	}
	return ls
}

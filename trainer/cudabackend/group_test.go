//go:build masscuda || masscudaemu

package cudabackend

import (
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/kernels"
)

// groupRef is the Go reference of three projections of one input x with LoRA, one by one:
// y_i = x·W_iᵀ + s·(x·A_iᵀ)·B_iᵀ, dB_i = s·dy_iᵀ·(x·A_iᵀ), dA_i = s·(dy_i·B_i)ᵀ·x and
// dx = Σ_i dy_i·W_i + s·(dy_i·B_i)·A_i.
type groupRef struct {
	x            []float32
	w, a, bm, dy [][]float32
	y, dA, dB    [][]float32
	dx           []float32
	tn, in, rank int
	outs         []int
	scale        float32
}

func newGroupRef(r *rand.Rand) groupRef {
	rb := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = cuda.RoundBF16(float32(r.NormFloat64()))
		}
		return v
	}
	g := groupRef{tn: 24, in: 64, rank: 8, outs: []int{48, 16, 16}, scale: 2}
	g.x, g.dx = rb(g.tn*g.in), make([]float32, g.tn*g.in)
	for _, out := range g.outs {
		w, a, bm, dy := rb(out*g.in), rb(g.rank*g.in), rb(out*g.rank), rb(g.tn*out)
		xa := make([]float32, g.tn*g.rank)
		cuda.Gemm(false, true, g.tn, g.rank, g.in, 1, g.x, a, 0, xa)
		y := make([]float32, g.tn*out)
		cuda.Gemm(false, true, g.tn, out, g.in, 1, g.x, w, 0, y)
		cuda.Gemm(false, true, g.tn, out, g.rank, g.scale, cuda.RoundSliceBF16(xa), bm, 1, y)
		db, dyb, da := make([]float32, out*g.rank), make([]float32, g.tn*g.rank), make([]float32, g.rank*g.in)
		cuda.Gemm(true, false, out, g.rank, g.tn, g.scale, dy, xa, 0, db)
		cuda.Gemm(false, false, g.tn, g.rank, out, 1, dy, bm, 0, dyb)
		cuda.Gemm(true, false, g.rank, g.in, g.tn, g.scale, dyb, g.x, 0, da)
		cuda.Gemm(false, false, g.tn, g.in, out, 1, dy, w, 1, g.dx)
		cuda.Gemm(false, false, g.tn, g.in, g.rank, g.scale, dyb, a, 1, g.dx)
		g.w, g.a, g.bm, g.dy = append(g.w, w), append(g.a, a), append(g.bm, bm), append(g.dy, dy)
		g.y, g.dA, g.dB = append(g.y, y), append(g.dA, da), append(g.dB, db)
	}
	return g
}

// TestLinearGroup runs three projections as one group (stacked A: one product for xa, one
// for dA, one for the input gradient's LoRA term) and checks y, dx, dA and dB against the
// one-by-one Go reference. It also checks that a gap between the A matrices ungroups them.
func TestLinearGroup(t *testing.T) {
	g := newGroupRef(rand.New(rand.NewPCG(41, 42)))
	dev, err := device.Open(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	err = dev.Do(func(x0 *device.Exec) error {
		ops, err := kernels.New(x0, "")
		if err != nil {
			return err
		}
		defer ops.Close()
		sc := &scope{x: x0}
		defer sc.release()
		b := &Backend{ops: ops, w: &weights{scaling: g.scale}}
		return groupCheck(t, b, sc, g)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func groupCheck(t *testing.T, b *Backend, sc *scope, g groupRef) error {
	o, x0 := b.ops, sc.x
	na := g.rank * g.in
	abf, err := sc.bf16(3 * na)
	if err != nil {
		return err
	}
	ga, err := sc.f32(3 * na)
	if err != nil {
		return err
	}
	if err := o.Fill(ga, 0, 3*na); err != nil {
		return err
	}
	var lo [nMods]*loraMod
	ls, ys, dys := make([]linear, 3), make([]uintptr, 3), make([]uintptr, 3)
	for i, out := range g.outs {
		m := &loraMod{in: g.in, out: out, rank: g.rank,
			abf: devmem.Block{Ptr: abf + uintptr(2*i*na), Size: int64(2 * na)}, ga: devmem.Block{Ptr: ga + uintptr(4*i*na), Size: int64(4 * na)}}
		if err := x0.CopyIn(m.abf.Ptr, ptrOf(cuda.EncodeBF16(g.a[i])), int64(2*na)); err != nil {
			return err
		}
		bb, err := kernels.UploadBF16(x0, g.bm[i])
		if err != nil {
			return err
		}
		sc.blocks = append(sc.blocks, bb)
		m.bbf = bb
		if m.gb.Ptr, err = sc.f32(out * g.rank); err != nil {
			return err
		}
		if err := o.Fill(m.gb.Ptr, 0, out*g.rank); err != nil {
			return err
		}
		w, err := kernels.UploadBF16(x0, g.w[i])
		if err != nil {
			return err
		}
		dy, err := kernels.UploadBF16(x0, g.dy[i])
		if err != nil {
			return err
		}
		sc.blocks = append(sc.blocks, w, dy)
		if ys[i], err = sc.bf16(g.tn * out); err != nil {
			return err
		}
		lo[mQ+i], dys[i] = m, dy.Ptr
		ls[i] = linear{T: g.tn, in: g.in, out: out, w: w.Ptr, lo: m}
	}
	grp := newLoRAGroup(lo, mQ, mK, mV)
	if !grouped(grp, ls) {
		t.Fatal("three contiguous A matrices did not group")
	}
	xb, err := kernels.UploadBF16(x0, g.x)
	if err != nil {
		return err
	}
	sc.blocks = append(sc.blocks, xb)
	dx, err := sc.bf16(g.tn * g.in)
	if err != nil {
		return err
	}
	xa, err := b.linFwdGroup(sc, grp, ls, ys, xb.Ptr)
	if err != nil {
		return err
	}
	if err := b.linBwdGroup(sc, grp, ls, dx, dys, xb.Ptr, xa); err != nil {
		return err
	}
	tol := cuda.DefaultTolBF16
	check := func(name string, got, want []float32) {
		if e := cuda.CheckClose("lora group "+name, got, want, tol); e != nil {
			t.Error(e)
		}
	}
	check("dx", dl16(t, x0, dx, g.tn*g.in), g.dx)
	for i, out := range g.outs {
		check("y", dl16(t, x0, ys[i], g.tn*out), g.y[i])
		check("dA", dl32(t, x0, lo[mQ+i].ga.Ptr, na), g.dA[i])
		check("dB", dl32(t, x0, lo[mQ+i].gb.Ptr, out*g.rank), g.dB[i])
	}
	lo[mK].abf.Ptr += 128 // a gap after A_q
	if newLoRAGroup(lo, mQ, mK, mV) != nil {
		t.Error("A matrices with a gap between them grouped")
	}
	ls[1].dropout = 0.1
	if grouped(grp, ls) {
		t.Error("projections with dropout grouped")
	}
	return nil
}

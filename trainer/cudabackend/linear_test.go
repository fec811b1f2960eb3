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

// TestLinearDropout checks one LoRA projection with dropout, forward and backward, against
// the Go references: y = x·Wᵀ (+ b) + s·(drop(x)·Aᵀ)·Bᵀ, dB = s·dyᵀ·xa, dA = s·(dy·B)ᵀ·drop(x),
// dx = dy·W + drop(s·(dy·B)·A), with the mask of cuda.DropoutKeep; with and without a
// (frozen) bias, which changes y and nothing in the backward.
func TestLinearDropout(t *testing.T) {
	for _, tc := range []struct {
		name string
		bias bool
	}{{"plain", false}, {"bias", true}} {
		t.Run(tc.name, func(t *testing.T) { linearDropout(t, tc.bias) })
	}
}

// linearCase is one projection's inputs and its Go reference outputs.
type linearCase struct {
	x, w, a, bm, dy, bias        []float32
	want, wantDX, wantDA, wantDB []float32
}

const (
	ltn, lin, lout, lrank = 24, 64, 48, 8
	lp, ls                = 0.25, 2
	lseed                 = 12345
)

func newLinearCase(withBias bool) linearCase {
	const tn, in, out, rank, p, s, seed = ltn, lin, lout, lrank, lp, ls, lseed
	r := rand.New(rand.NewPCG(21, 22))
	rb := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = cuda.RoundBF16(float32(r.NormFloat64()))
		}
		return v
	}
	c := linearCase{x: rb(tn * in), w: rb(out * in), a: rb(rank * in), bm: rb(out * rank), dy: rb(tn * out)}
	xd := cuda.RoundSliceBF16(cuda.Dropout(c.x, seed, p))
	c.bias = rb(out)
	for i := range c.bias {
		c.bias[i] *= 8 // as large as x·Wᵀ (std √in), so that a dropped bias cannot pass
	}
	c.want = make([]float32, tn*out)
	if withBias {
		c.want = cuda.BiasRows(c.bias, tn)
	}
	cuda.Gemm(false, true, tn, out, in, 1, c.x, c.w, 1, c.want)
	xa := make([]float32, tn*rank)
	cuda.Gemm(false, true, tn, rank, in, 1, xd, c.a, 0, xa)
	cuda.Gemm(false, true, tn, out, rank, s, xa, c.bm, 1, c.want)
	c.wantDB = make([]float32, out*rank)
	cuda.Gemm(true, false, out, rank, tn, s, c.dy, xa, 0, c.wantDB)
	dyb := make([]float32, tn*rank)
	cuda.Gemm(false, false, tn, rank, out, 1, c.dy, c.bm, 0, dyb)
	c.wantDA = make([]float32, rank*in)
	cuda.Gemm(true, false, rank, in, tn, s, dyb, xd, 0, c.wantDA)
	lo := make([]float32, tn*in)
	cuda.Gemm(false, false, tn, in, rank, s, dyb, c.a, 0, lo)
	c.wantDX = cuda.Dropout(lo, seed, p)
	cuda.Gemm(false, false, tn, in, out, 1, c.dy, c.w, 1, c.wantDX)
	return c
}

func linearDropout(t *testing.T, withBias bool) {
	const tn, in, out, rank, p, s, seed = ltn, lin, lout, lrank, lp, ls, lseed
	lc := newLinearCase(withBias)
	x, w, a, bm, dy, bias := lc.x, lc.w, lc.a, lc.bm, lc.dy, lc.bias
	want, wantDX, wantDA, wantDB := lc.want, lc.wantDX, lc.wantDA, lc.wantDB

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
		up := func(v []float32) uintptr {
			blk, e := kernels.UploadBF16(x0, v)
			if e != nil && err == nil {
				err = e
			}
			sc.blocks = append(sc.blocks, blk)
			return blk.Ptr
		}
		lm := &loraMod{in: in, out: out, rank: rank}
		lm.abf, lm.bbf = devmem.Block{Ptr: up(a)}, devmem.Block{Ptr: up(bm)}
		xp, wp, dyp := up(x), up(w), up(dy)
		zero := func(n int) uintptr {
			p, e := sc.f32(n)
			if e == nil {
				e = ops.Fill(p, 0, n)
			}
			if e != nil && err == nil {
				err = e
			}
			return p
		}
		lm.ga, lm.gb = devmem.Block{Ptr: zero(rank * in)}, devmem.Block{Ptr: zero(out * rank)}
		if err != nil {
			return err
		}
		yp, err := sc.bf16(tn * out)
		if err != nil {
			return err
		}
		dxp, err := sc.bf16(tn * in)
		if err != nil {
			return err
		}
		b := &Backend{ops: ops, w: &weights{scaling: s, dropout: p}}
		l := linear{T: tn, in: in, out: out, w: wp, lo: lm, seed: seed, dropout: p}
		if withBias {
			if l.bias = up(bias); err != nil {
				return err
			}
		}
		tmp := &scope{x: x0}
		defer tmp.release()
		xap, err := b.linFwd(sc, tmp, l, yp, xp)
		if err != nil {
			return err
		}
		if err := b.linBwd(tmp, l, dxp, false, dyp, xp, xap); err != nil {
			return err
		}
		for _, c := range []struct {
			name string
			got  []float32
			want []float32
			tol  float64
		}{
			{"y", dl16(t, x0, yp, tn*out), want, cuda.DefaultTolBF16},
			{"dx", dl16(t, x0, dxp, tn*in), wantDX, cuda.DefaultTolBF16},
			{"dA", dl32(t, x0, lm.ga.Ptr, rank*in), wantDA, cuda.DefaultTolBF16},
			{"dB", dl32(t, x0, lm.gb.Ptr, out*rank), wantDB, cuda.DefaultTolBF16},
		} {
			if e := cuda.CheckClose("lora linear "+c.name, c.got, c.want, c.tol); e != nil {
				t.Error(e)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func dl16(t *testing.T, x *device.Exec, p uintptr, n int) []float32 {
	v, err := kernels.DownloadBF16(x, devmem.Block{Ptr: p}, n)
	if err != nil {
		t.Error(err)
	}
	return v
}

func dl32(t *testing.T, x *device.Exec, p uintptr, n int) []float32 {
	v, err := kernels.Download[float32](x, devmem.Block{Ptr: p}, n)
	if err != nil {
		t.Error(err)
	}
	return v
}

//go:build masscuda || masscudaemu

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/cublaslt"
)

const tb, tf = cuda.DefaultTolBF16, cuda.DefaultTolF32

func TestEmbedding(t *testing.T) {
	r := rng(t)
	const v, d, n = 1000, 256, 300
	table := randBF16(r, v*d, 1)
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(r.IntN(v))
	}
	want, err := cuda.EmbeddingForward(table, v, d, ids)
	if err != nil {
		t.Fatal(err)
	}
	run(t, func(e *env) {
		out := e.out(n*d, 2)
		e.must(ops.Embedding(out, e.bf16(table), e.i32(ids), n, d, v))
		e.check("embedding_fwd", e.getBF16(out, n*d), want, 0)
	})
}

func TestRMSNorm(t *testing.T) {
	r := rng(t)
	const n, d = 64, 1024
	x, res, w := randBF16(r, n*d, 1), randBF16(r, n*d, 1), randBF16(r, d, 1)
	dy, dres := randBF16(r, n*d, 1), randBF16(r, n*d, 1)
	y, h, rstd := cuda.RMSNormForward(x, res, w, d, 1e-6)
	dh := cuda.RMSNormBackward(dy, h, rstd, w, dres, d)
	run(t, func(e *env) {
		gy, gh, gr, gdh := e.out(n*d, 2), e.out(n*d, 2), e.out(n, 4), e.out(n*d, 2)
		wp := e.bf16(w)
		e.must(ops.RMSNormFwd(gy, gh, gr, e.bf16(x), e.bf16(res), wp, n, d, 1e-6))
		e.must(ops.RMSNormBwd(gdh, e.bf16(dy), gh, gr, wp, e.bf16(dres), n, d))
		e.check("rmsnorm_fwd y", e.getBF16(gy, n*d), y, tb)
		e.check("rmsnorm_fwd h", e.getBF16(gh, n*d), h, tb)
		e.check("rmsnorm_fwd rstd", e.getF32(gr, n), rstd, tf)
		e.check("rmsnorm_bwd dh", e.getBF16(gdh, n*d), dh, tb)
	})
}

func TestQKNormRoPE(t *testing.T) {
	for _, hd := range []int{128, 64} {
		r := rng(t)
		const tn, h = 64, 8
		x, w, dout := randBF16(r, tn*h*hd, 1), randBF16(r, hd, 1), randBF16(r, tn*h*hd, 1)
		pos := make([]int32, tn)
		for i := range pos {
			pos[i] = int32(r.IntN(4096))
		}
		out, rstd := cuda.QKNormRoPEForward(x, w, pos, h, hd, 1e-6, 1e6)
		dx := cuda.QKNormRoPEBackward(dout, x, rstd, w, pos, h, hd, 1e6)
		run(t, func(e *env) {
			gout, gr, gdx := e.out(tn*h*hd, 2), e.out(tn*h, 4), e.out(tn*h*hd, 2)
			xp, wp, pp := e.bf16(x), e.bf16(w), e.i32(pos)
			e.must(ops.QKNormRoPEFwd(gout, gr, xp, wp, pp, tn, h, hd, 1e-6, 1e6))
			e.must(ops.QKNormRoPEBwd(gdx, e.bf16(dout), xp, gr, wp, pp, tn, h, hd, 1e6))
			suffix := map[int]string{128: " hd128", 64: " hd64"}[hd]
			e.check("qk_norm_rope_fwd"+suffix, e.getBF16(gout, tn*h*hd), out, tb)
			e.check("qk_norm_rope_fwd rstd"+suffix, e.getF32(gr, tn*h), rstd, tf)
			e.check("qk_norm_rope_bwd"+suffix, e.getBF16(gdx, tn*h*hd), dx, tb)
		})
	}
}

func TestRoPE(t *testing.T) {
	r := rng(t)
	const tn, h, hd = 64, 8, 128
	x, dout := randBF16(r, tn*h*hd, 1), randBF16(r, tn*h*hd, 1)
	pos := make([]int32, tn)
	for i := range pos {
		pos[i] = int32(r.IntN(32768))
	}
	out := cuda.RoPEForward(x, pos, h, hd, 1e6)
	dx := cuda.RoPEBackward(dout, pos, h, hd, 1e6)
	run(t, func(e *env) {
		gout, gdx := e.bf16(x), e.out(tn*h*hd, 2)
		pp := e.i32(pos)
		e.must(ops.RoPEFwd(gout, gout, pp, tn, h, hd, 1e6)) // in place, as the backend runs it
		e.must(ops.RoPEBwd(gdx, e.bf16(dout), pp, tn, h, hd, 1e6))
		e.check("rope_fwd", e.getBF16(gout, tn*h*hd), out, tb)
		e.check("rope_bwd", e.getBF16(gdx, tn*h*hd), dx, tb)
	})
}

// TestBiasGemm checks a projection with bias as the backend runs it: the bias broadcast
// into the output, then the product accumulated onto it in bf16 (beta 1).
func TestBiasGemm(t *testing.T) {
	r := rng(t)
	const m, n, k = 96, 160, 512
	x, w, b := randBF16(r, m*k, 1), randBF16(r, n*k, 0.05), randBF16(r, n, 1)
	want := cuda.BiasRows(b, m)
	cuda.Gemm(false, true, m, n, k, 1, x, w, 1, want)
	run(t, func(e *env) {
		y := e.out(m*n, 2)
		e.must(ops.BiasFill(y, e.bf16(b), m, n))
		e.check("bias_fill_bf16", e.getBF16(y, m*n), cuda.BiasRows(b, m), 0)
		e.must(ops.Gemm(cublaslt.Gemm{TransB: true, M: m, N: n, K: k, A: e.bf16(x), B: e.bf16(w), C: y,
			CType: cublaslt.BF16, Alpha: 1, Beta: 1}))
		e.check("bias gemm bf16", e.getBF16(y, m*n), want, tb)
	})
}

func TestSwiGLU(t *testing.T) {
	r := rng(t)
	const n = 100003
	g, u, dh := randBF16(r, n, 2), randBF16(r, n, 1), randBF16(r, n, 1)
	h := cuda.SwiGLUForward(g, u)
	dg, du := cuda.SwiGLUBackward(dh, g, u)
	run(t, func(e *env) {
		gh, gdg, gdu := e.out(n, 2), e.out(n, 2), e.out(n, 2)
		gp, up := e.bf16(g), e.bf16(u)
		e.must(ops.SwiGLUFwd(gh, gp, up, n))
		e.must(ops.SwiGLUBwd(gdg, gdu, e.bf16(dh), gp, up, n))
		e.check("swiglu_fwd", e.getBF16(gh, n), h, tb)
		e.check("swiglu_bwd dgate", e.getBF16(gdg, n), dg, tb)
		e.check("swiglu_bwd dup", e.getBF16(gdu, n), du, tb)
	})
}

func TestCastsFillAdd(t *testing.T) {
	r := rng(t)
	const n = 70001
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	xb := randBF16(r, n, 1)
	rounded := cuda.DecodeBF16(cuda.EncodeBF16(x))
	sum := make([]float32, n)
	for i := range sum {
		sum[i] = cuda.RoundBF16(rounded[i] + xb[i])
	}
	run(t, func(e *env) {
		b, f, fl := e.out(n, 2), e.out(n, 4), e.out(n, 4)
		e.must(ops.CastF32BF16(b, e.f32(x), n))
		e.must(ops.CastBF16F32(f, e.bf16(xb), n))
		e.must(ops.Fill(fl, 0.25, n))
		e.check("cast_f32_bf16", e.getBF16(b, n), rounded, 0)
		e.check("cast_bf16_f32", e.getF32(f, n), xb, 0)
		want := make([]float32, n)
		for i := range want {
			want[i] = 0.25
		}
		e.check("fill_f32", e.getF32(fl, n), want, 0)
		e.must(ops.AddBF16(b, e.bf16(xb), n))
		e.check("add_bf16", e.getBF16(b, n), sum, 0)
	})
}

func TestAdamWAndNorm(t *testing.T) {
	r := rng(t)
	const n = 100000
	p, m, v, g := randSlice(r, n), randSlice(r, n), randSlice(r, n), randSlice(r, n)
	for i := range v {
		v[i] *= v[i]
	}
	c := cuda.AdamWConfig{LR: 3e-5, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Step: 7, GradScale: 0.5}
	wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
	cuda.AdamW(wp, wm, wv, g, c)
	ss := cuda.SumSquares(g, p)
	run(t, func(e *env) {
		pp, mp, vp, gp := e.f32(p), e.f32(m), e.f32(v), e.f32(g)
		acc := e.out(1, 4)
		e.must(ops.Fill(acc, 0, 1))
		e.must(ops.SumSq(acc, gp, n))
		e.must(ops.SumSq(acc, e.f32(p), n))
		bc1, bc2 := 1-pow32(c.Beta1, c.Step), 1-pow32(c.Beta2, c.Step)
		e.must(ops.AdamW(pp, mp, vp, gp, n, c.LR, c.Beta1, c.Beta2, c.Eps, c.WeightDecay, bc1, bc2, c.GradScale))
		e.check("adamw p", e.getF32(pp, n), wp, tf)
		e.check("adamw m", e.getF32(mp, n), wm, tf)
		e.check("adamw v", e.getF32(vp, n), wv, tf)
		e.check("sumsq", e.getF32(acc, 1), []float32{float32(ss)}, tf)
	})
}

// TestAdamWFlat checks the fused step: device-side clipping from the global Σg², AdamW,
// the bf16 copies and the zeroed gradients, against cuda.AdamW with cuda.ClipScale.
func TestAdamWFlat(t *testing.T) {
	r := rng(t)
	const n, maxNorm = 50000, 1.0
	p, m, v, g := randSlice(r, n), randSlice(r, n), randSlice(r, n), randSlice(r, n)
	for i := range v {
		v[i] *= v[i]
	}
	c := cuda.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.01, Step: 3}
	c.GradScale = cuda.ClipScale(math.Sqrt(cuda.SumSquares(g)), maxNorm)
	wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
	cuda.AdamW(wp, wm, wv, g, c)
	run(t, func(e *env) {
		pp, mp, vp, gp := e.f32(p), e.f32(m), e.f32(v), e.f32(g)
		pbf, acc := e.out(n, 2), e.out(1, 4)
		e.must(ops.Fill(acc, 0, 1))
		e.must(ops.SumSq(acc, gp, n))
		s := FlatStep{LR: c.LR, Beta1: c.Beta1, Beta2: c.Beta2, Eps: c.Eps, WeightDecay: c.WeightDecay,
			BC1: 1 - pow32(c.Beta1, c.Step), BC2: 1 - pow32(c.Beta2, c.Step), MaxNorm: maxNorm}
		e.must(ops.AdamWFlat(pp, mp, vp, gp, pbf, acc, n, s))
		e.check("adamw_flat p", e.getF32(pp, n), wp, tf)
		e.check("adamw_flat m", e.getF32(mp, n), wm, tf)
		e.check("adamw_flat v", e.getF32(vp, n), wv, tf)
		e.check("adamw_flat bf16 copy", e.getBF16(pbf, n), cuda.RoundSliceBF16(wp), tb)
		e.check("adamw_flat zeroed grad", e.getF32(gp, n), make([]float32, n), 0)
	})
}

func pow32(b float32, n int) float32 {
	out := float32(1)
	for range n {
		out *= b
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func TestDropout(t *testing.T) {
	r := rng(t)
	const n = 50003 // a tail past the 8-element steps
	x, dx := randBF16(r, n, 1), randBF16(r, n, 1)
	s := uint32(r.Uint32())
	want := cuda.Dropout(x, s, 0.05)
	wantAdd := make([]float32, n)
	for i := range wantAdd {
		wantAdd[i] = dx[i] + want[i]
	}
	run(t, func(e *env) {
		out := e.out(n, 2)
		e.must(ops.Dropout(out, e.bf16(x), n, s, 0.05))
		e.check("lora_dropout", e.getBF16(out, n), want, tb)
		acc := e.bf16(dx)
		e.must(ops.DropoutAdd(acc, e.bf16(x), n, s, 0.05))
		e.check("lora_dropout_add", e.getBF16(acc, n), wantAdd, tb)
	})
}

func TestGemm(t *testing.T) {
	r := rng(t)
	const m, n, k = 96, 160, 1024
	for _, tc := range []struct {
		name   string
		ta, tb bool
	}{{"nn", false, false}, {"nt", false, true}, {"tn", true, false}, {"tt", true, true}} {
		a, b, c := randBF16(r, m*k, 1), randBF16(r, k*n, 1), randBF16(r, m*n, 1)
		want := append([]float32(nil), c...)
		cuda.Gemm(tc.ta, tc.tb, m, n, k, 0.5, a, b, 1, want)
		run(t, func(e *env) {
			cf := e.f32(c)
			cb := e.bf16(c)
			g := cublaslt.Gemm{TransA: tc.ta, TransB: tc.tb, M: m, N: n, K: k, A: e.bf16(a), B: e.bf16(b),
				C: cf, CType: cublaslt.F32, Alpha: 0.5, Beta: 1}
			e.must(ops.Gemm(g))
			g.C, g.CType = cb, cublaslt.BF16
			e.must(ops.Gemm(g))
			e.check("gemm "+tc.name+" f32", e.getF32(cf, m*n), want, tf)
			e.check("gemm "+tc.name+" bf16", e.getBF16(cb, m*n), want, tb)
		})
	}
}

func TestFillNormal(t *testing.T) {
	r := rng(t)
	const n = 30000
	s := r.Uint32()
	want := make([]float32, n)
	for i := range want {
		want[i] = cuda.NormalAt(s, uint64(i), 0.02)
	}
	run(t, func(e *env) {
		out := e.out(n, 2)
		e.must(ops.FillNormal(out, n, s, 0.02))
		e.check("fill_normal_bf16", e.getBF16(out, n), want, tb)
	})
}

//go:build masscudaemu

package emu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
)

const tb, tf = cuda.DefaultTolBF16, cuda.DefaultTolF32

func randBF16(r *rand.Rand, n int, s float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = cuda.RoundBF16(float32(r.NormFloat64()) * s)
	}
	return out
}

type env struct {
	t    *testing.T
	mems []Mem
}

func newEnv(t *testing.T) *env {
	e := &env{t: t}
	t.Cleanup(func() {
		for _, m := range e.mems {
			m.Free()
		}
	})
	return e
}

func (e *env) keep(m Mem) Mem       { e.mems = append(e.mems, m); return m }
func (e *env) bf16(f []float32) Mem { return e.keep(BF16(f)) }
func (e *env) f32(f []float32) Mem  { return e.keep(F32(f)) }
func (e *env) i32(v []int32) Mem    { return e.keep(I32(v)) }
func (e *env) out(bytes int) Mem    { return e.keep(Alloc(bytes)) }

func (e *env) launch(name string, grid [3]int, block, smem int, args ...uint64) {
	e.t.Helper()
	if err := Launch(name, grid, block, smem, args...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) check(name string, got, want []float32, tol float64) {
	e.t.Helper()
	if err := cuda.CheckClose(name, got, want, tol); err != nil {
		e.t.Error(err)
	}
}

func g1(n int) [3]int { return [3]int{n, 1, 1} }

func TestEmbeddingRMSNorm(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(1, 2))
	const v, d, n = 50, 96, 7
	table := randBF16(r, v*d, 1)
	ids := []int32{3, 0, 49, 7, 7, 12, 1}
	want, err := cuda.EmbeddingForward(table, v, d, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := e.out(2 * n * d)
	e.launch("embedding_fwd", g1(4), 64, 0, P(out), P(e.bf16(table)), P(e.i32(ids)), I(n), I(d), I(v))
	e.check("embedding_fwd", out.GetBF16(n*d), want, 0)

	x, res, w := randBF16(r, n*d, 1), randBF16(r, n*d, 1), randBF16(r, d, 1)
	dy, dres := randBF16(r, n*d, 1), randBF16(r, n*d, 1)
	y, h, rstd := cuda.RMSNormForward(x, res, w, d, 1e-6)
	dh := cuda.RMSNormBackward(dy, h, rstd, w, dres, d)
	gy, gh, gr, gdh := e.out(2*n*d), e.out(2*n*d), e.out(4*n), e.out(2*n*d)
	wp := e.bf16(w)
	e.launch("rmsnorm_fwd", g1(n), 64, 0, P(gy), P(gh), P(gr), P(e.bf16(x)), P(e.bf16(res)), P(wp), I(n), I(d), F(1e-6))
	e.launch("rmsnorm_bwd", g1(n), 64, 0, P(gdh), P(e.bf16(dy)), P(gh), P(gr), P(wp), P(e.bf16(dres)), I(n), I(d))
	e.check("rmsnorm_fwd y", gy.GetBF16(n*d), y, tb)
	e.check("rmsnorm_fwd h", gh.GetBF16(n*d), h, tb)
	e.check("rmsnorm_fwd rstd", gr.GetF32(n), rstd, tf)
	e.check("rmsnorm_bwd", gdh.GetBF16(n*d), dh, tb)
}

func TestQKNormRoPE(t *testing.T) {
	for _, hd := range []int{16, 128} {
		e, r := newEnv(t), rand.New(rand.NewPCG(3, uint64(hd)))
		const tn, h = 5, 3
		x, w, dout := randBF16(r, tn*h*hd, 1), randBF16(r, hd, 1), randBF16(r, tn*h*hd, 1)
		pos := []int32{0, 1, 17, 300, 4095}
		out, rstd := cuda.QKNormRoPEForward(x, w, pos, h, hd, 1e-6, 1e6)
		dx := cuda.QKNormRoPEBackward(dout, x, rstd, w, pos, h, hd, 1e6)
		gout, gr, gdx := e.out(2*tn*h*hd), e.out(4*tn*h), e.out(2*tn*h*hd)
		xp, wp, pp := e.bf16(x), e.bf16(w), e.i32(pos)
		block := (hd/2 + 31) / 32 * 32
		e.launch("qk_norm_rope_fwd", g1(tn*h), block, 0, P(gout), P(gr), P(xp), P(wp), P(pp), I(tn*h), I(h), I(hd), F(1e-6), F(1e6))
		e.launch("qk_norm_rope_bwd", g1(tn*h), block, 0, P(gdx), P(e.bf16(dout)), P(xp), P(gr), P(wp), P(pp), I(tn*h), I(h), I(hd), F(1e6))
		e.check("qk_norm_rope_fwd", gout.GetBF16(tn*h*hd), out, tb)
		e.check("qk_norm_rope_fwd rstd", gr.GetF32(tn*h), rstd, tf)
		e.check("qk_norm_rope_bwd", gdx.GetBF16(tn*h*hd), dx, tb)
	}
}

func TestRoPE(t *testing.T) {
	for _, hd := range []int{16, 128} {
		e, r := newEnv(t), rand.New(rand.NewPCG(4, uint64(hd)))
		const tn, h = 5, 3
		x, dout := randBF16(r, tn*h*hd, 1), randBF16(r, tn*h*hd, 1)
		pos := []int32{0, 1, 17, 300, 4095}
		out := cuda.RoPEForward(x, pos, h, hd, 1e6)
		dx := cuda.RoPEBackward(dout, pos, h, hd, 1e6)
		gout, gdx := e.out(2*tn*h*hd), e.bf16(dout)
		pp := e.i32(pos)
		// Two blocks of 64 threads: at hd 128 the grid-stride loop wraps (960 pairs). The
		// backward runs in place, as the backend runs the forward.
		e.launch("rope_fwd", g1(2), 64, 0, P(gout), P(e.bf16(x)), P(pp), I(tn*h), I(h), I(hd), F(1e6))
		e.launch("rope_bwd", g1(2), 64, 0, P(gdx), P(gdx), P(pp), I(tn*h), I(h), I(hd), F(1e6))
		e.check("rope_fwd", gout.GetBF16(tn*h*hd), out, tb)
		e.check("rope_bwd", gdx.GetBF16(tn*h*hd), dx, tb)
	}
}

func TestBiasFill(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(11, 12))
	const rows, cols = 37, 24
	b := randBF16(r, cols, 1)
	out := e.out(2 * rows * cols)
	e.launch("bias_fill_bf16", g1(2), 128, 0, P(out), P(e.bf16(b)), I(rows), I(cols))
	e.check("bias_fill_bf16", out.GetBF16(rows*cols), cuda.BiasRows(b, rows), 0)
}

func TestElementwise(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(5, 6))
	const n = 3001
	g, u, dh := randBF16(r, n, 2), randBF16(r, n, 1), randBF16(r, n, 1)
	hw := cuda.SwiGLUForward(g, u)
	dgw, duw := cuda.SwiGLUBackward(dh, g, u)
	gh, gdg, gdu := e.out(2*n), e.out(2*n), e.out(2*n)
	gp, up := e.bf16(g), e.bf16(u)
	e.launch("swiglu_fwd", g1(3), 256, 0, P(gh), P(gp), P(up), I(n))
	e.launch("swiglu_bwd", g1(3), 256, 0, P(gdg), P(gdu), P(e.bf16(dh)), P(gp), P(up), I(n))
	e.check("swiglu_fwd", gh.GetBF16(n), hw, tb)
	e.check("swiglu_bwd dgate", gdg.GetBF16(n), dgw, tb)
	e.check("swiglu_bwd dup", gdu.GetBF16(n), duw, tb)

	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	cb, cf := e.out(2*n), e.out(4*n)
	e.launch("cast_f32_bf16", g1(2), 256, 0, P(cb), P(e.f32(x)), I(n))
	e.launch("cast_bf16_f32", g1(2), 256, 0, P(cf), P(cb), I(n))
	rounded := cuda.DecodeBF16(cuda.EncodeBF16(x))
	e.check("cast_f32_bf16", cb.GetBF16(n), rounded, 0)
	e.check("cast_bf16_f32", cf.GetF32(n), rounded, 0)
	e.launch("add_bf16", g1(2), 256, 0, P(cb), P(e.bf16(u)), I(n))
	sum := make([]float32, n)
	for i := range sum {
		sum[i] = cuda.RoundBF16(rounded[i] + u[i])
	}
	e.check("add_bf16", cb.GetBF16(n), sum, 0)

	seed := r.Uint32()
	drop := e.out(2 * n)
	e.launch("lora_dropout", g1(2), 256, 0, P(drop), P(gp), I(n), I(int(seed)), F(0.05))
	e.check("lora_dropout", drop.GetBF16(n), cuda.Dropout(g, seed, 0.05), tb)
	// lora_dropout_add: dx += dropout(t), the dropout's backward fused with the add.
	dx0 := randBF16(r, n, 1)
	wantAdd := cuda.Dropout(g, seed, 0.05)
	for i := range wantAdd {
		wantAdd[i] += dx0[i]
	}
	dxp := e.bf16(dx0)
	e.launch("lora_dropout_add", g1(2), 256, 0, P(dxp), P(gp), I(n), I(int(seed)), F(0.05))
	e.check("lora_dropout_add", dxp.GetBF16(n), wantAdd, tb)

	norm := e.out(2 * n)
	e.launch("fill_normal_bf16", g1(2), 256, 0, P(norm), I(n), I(int(seed)), F(0.5))
	want := make([]float32, n)
	for i := range want {
		want[i] = cuda.NormalAt(seed, uint64(i), 0.5)
	}
	e.check("fill_normal_bf16", norm.GetBF16(n), want, tb)
}

func TestAdamWSumSq(t *testing.T) {
	e, r := newEnv(t), rand.New(rand.NewPCG(7, 8))
	const n = 2000
	p, m, v, g := randBF16(r, n, 1), randBF16(r, n, 1), randBF16(r, n, 1), randBF16(r, n, 1)
	for i := range v {
		v[i] *= v[i]
	}
	c := cuda.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Step: 3, GradScale: 0.7}
	wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
	cuda.AdamW(wp, wm, wv, g, c)
	pp, mp, vp, gp := e.f32(p), e.f32(m), e.f32(v), e.f32(g)
	bc1 := float32(1 - 0.9*0.9*0.9)
	bc2 := float32(1 - 0.999*0.999*0.999)
	e.launch("adamw", g1(3), 256, 0, P(pp), P(mp), P(vp), P(gp), I(n), F(c.LR), F(c.Beta1), F(c.Beta2), F(c.Eps), F(c.WeightDecay), F(bc1), F(bc2), F(c.GradScale))
	e.check("adamw p", pp.GetF32(n), wp, tf)
	e.check("adamw m", mp.GetF32(n), wm, tf)
	e.check("adamw v", vp.GetF32(n), wv, tf)
	acc := e.f32([]float32{0})
	e.launch("sumsq", g1(3), 256, 0, P(acc), P(gp), I(n))
	e.check("sumsq", acc.GetF32(1), []float32{float32(cuda.SumSquares(g))}, tf)
}

// TestAdamWFlat: the fused step with clipping from the device-side Σg² (both the clipping
// and the non-clipping case), bf16 copies and zeroed gradients.
func TestAdamWFlat(t *testing.T) {
	for _, maxNorm := range []float32{1, 1e6} {
		e, r := newEnv(t), rand.New(rand.NewPCG(9, 10))
		const n = 3000
		p, m, v, g := randBF16(r, n, 1), randBF16(r, n, 1), randBF16(r, n, 1), randBF16(r, n, 1)
		for i := range v {
			v[i] *= v[i]
		}
		c := cuda.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.01, Step: 2}
		c.GradScale = cuda.ClipScale(math.Sqrt(cuda.SumSquares(g)), float64(maxNorm))
		wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
		cuda.AdamW(wp, wm, wv, g, c)
		pp, mp, vp, gp, pbf := e.f32(p), e.f32(m), e.f32(v), e.f32(g), e.bf16(make([]float32, n))
		acc := e.f32([]float32{0})
		e.launch("sumsq", g1(3), 256, 0, P(acc), P(gp), I(n))
		bc1, bc2 := float32(1-0.9*0.9), float32(1-0.95*0.95)
		e.launch("adamw_flat", g1(3), 256, 0, P(pp), P(mp), P(vp), P(gp), P(pbf), P(acc), I(n), F(c.LR), F(c.Beta1), F(c.Beta2),
			F(c.Eps), F(c.WeightDecay), F(bc1), F(bc2), F(maxNorm))
		e.check("adamw_flat p", pp.GetF32(n), wp, tf)
		e.check("adamw_flat m", mp.GetF32(n), wm, tf)
		e.check("adamw_flat v", vp.GetF32(n), wv, tf)
		e.check("adamw_flat bf16", pbf.GetBF16(n), cuda.RoundSliceBF16(wp), tb)
		e.check("adamw_flat grad reset", gp.GetF32(n), make([]float32, n), 0)
	}
}

//go:build masscudaemu

package emu

import (
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
)

// TestCausalConvSiLU runs causal_conv_silu_fwd/bwd against the Go references, with zero
// history and with a [K−1, C] state, on a grid smaller than the work (grid-stride loops).
func TestCausalConvSiLU(t *testing.T) {
	const n, c, k = 13, 24, 4
	r := rand.New(rand.NewPCG(5, 6))
	x, w, st := randBF16(r, n*c, 1), randF(r, c*k, 0.5), randF(r, (k-1)*c, 1)
	dy := randF(r, n*c, 1)
	for _, state := range [][]float32{nil, st} {
		e := newEnv(t)
		wantY, pre := cuda.CausalConvSiLU(x, w, state, n, c, k)
		wantDX := cuda.CausalConvSiLUBackward(dy, pre, w, n, c, k)
		sm := uint64(0)
		if state != nil {
			sm = P(e.f32(state))
		}
		xm, wm := e.bf16(x), e.f32(w)
		y, dx := e.out(4*n*c), e.out(2*n*c)
		e.launch("causal_conv_silu_fwd", g1(2), 64, 0, P(y), P(xm), P(wm), sm, I(n), I(c), I(k))
		e.launch("causal_conv_silu_bwd", g1(2), 64, 0, P(dx), P(e.f32(dy)), P(xm), P(wm), sm, I(n), I(c), I(k))
		e.check("causal_conv_silu_fwd", y.GetF32(n*c), wantY, tf)
		e.check("causal_conv_silu_bwd", dx.GetBF16(n*c), wantDX, tb)
	}
}

// TestGatedRMSNorm runs gated_rmsnorm_fwd/bwd against the Go references: rows of one value
// head (n = 32, 48), fewer blocks than rows.
func TestGatedRMSNorm(t *testing.T) {
	for _, n := range []int{32, 48} {
		const rows, eps = 7, 1e-6
		e, r := newEnv(t), rand.New(rand.NewPCG(uint64(n), 7))
		x, z, w := randF(r, rows*n, 1), randBF16(r, rows*n, 1.5), randF(r, n, 1)
		dy := randBF16(r, rows*n, 1)
		wantY, wantR := cuda.GatedRMSNorm(x, z, w, n, eps)
		wantDX, wantDZ := cuda.GatedRMSNormBackward(dy, x, z, w, n, eps)
		xm, zm, wm := e.f32(x), e.bf16(z), e.f32(w)
		y, rs, dx, dz := e.out(2*rows*n), e.out(4*rows), e.out(4*rows*n), e.out(2*rows*n)
		e.launch("gated_rmsnorm_fwd", g1(3), 32, 0, P(y), P(rs), P(xm), P(zm), P(wm), I(rows), I(n), F(eps))
		e.launch("gated_rmsnorm_bwd", g1(3), 32, 0, P(dx), P(dz), P(e.bf16(dy)), P(xm), P(zm), P(wm), P(rs), I(rows), I(n))
		e.check("gated_rmsnorm_fwd", y.GetBF16(rows*n), wantY, tb)
		e.check("gated_rmsnorm_fwd rstd", rs.GetF32(rows), wantR, tf)
		e.check("gated_rmsnorm_bwd dx", dx.GetF32(rows*n), wantDX, 1e-4)
		e.check("gated_rmsnorm_bwd dz", dz.GetBF16(rows*n), wantDZ, tb)
	}
}

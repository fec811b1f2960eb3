//go:build masscuda || masscudaemu

package kernels

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/errclass"
)

func TestAttention(t *testing.T) {
	for _, s := range []cuda.AttnShape{
		{T: 200, QHeads: 8, KVHeads: 2, HeadDim: 128},
		{T: 77, QHeads: 4, KVHeads: 4, HeadDim: 64},
	} {
		r := rng(t)
		nq, nkv := s.T*s.QHeads*s.HeadDim, s.T*s.KVHeads*s.HeadDim
		q, k, v := randBF16(r, nq, 1), randBF16(r, nkv, 1), randBF16(r, nkv, 1)
		dout := randBF16(r, nq, 1)
		out, lse := cuda.AttentionForward(q, k, v, s)
		dq, dk, dv := cuda.AttentionBackward(dout, q, k, v, out, lse, s)
		tag := fmt.Sprintf(" T%d g%d hd%d", s.T, s.QHeads/s.KVHeads, s.HeadDim)
		run(t, func(e *env) {
			b := AttnBufs{Q: e.bf16(q), K: e.bf16(k), V: e.bf16(v), O: e.out(nq, 2), LSE: e.out(s.QHeads*s.T, 4)}
			g := AttnGrads{DO: e.bf16(dout), DQ: e.out(nq, 2), DK: e.out(nkv, 2), DV: e.out(nkv, 2)}
			e.must(ops.FlashFwd(b, s))
			e.must(ops.FlashBwd(b, g, s))
			e.check("flash_attn_fwd"+tag, e.getBF16(b.O, nq), out, tb)
			e.check("flash_attn_fwd lse"+tag, e.getF32(b.LSE, s.QHeads*s.T), lse, tf)
			e.check("flash_attn_bwd dq"+tag, e.getBF16(g.DQ, nq), dq, tb)
			e.check("flash_attn_bwd dk"+tag, e.getBF16(g.DK, nkv), dk, tb)
			e.check("flash_attn_bwd dv"+tag, e.getBF16(g.DV, nkv), dv, tb)

			// Tensor cores: against the float64 reference and against the fp32 flash kernels.
			tb2 := AttnBufs{Q: b.Q, K: b.K, V: b.V, O: e.out(nq, 2), LSE: e.out(s.QHeads*s.T, 4)}
			tg := AttnGrads{DO: g.DO, DQ: e.out(nq, 2), DK: e.out(nkv, 2), DV: e.out(nkv, 2)}
			e.must(ops.TCFwd(tb2, s))
			e.must(ops.TCBwd(tb2, tg, s))
			for _, c := range []struct {
				name      string
				got, flsh P
				n         int
				want      []float32
			}{{"tc_attn_fwd", tb2.O, b.O, nq, out}, {"tc_attn_bwd dq", tg.DQ, g.DQ, nq, dq},
				{"tc_attn_bwd dk", tg.DK, g.DK, nkv, dk}, {"tc_attn_bwd dv", tg.DV, g.DV, nkv, dv}} {
				got := e.getBF16(c.got, c.n)
				e.check(c.name+tag, got, c.want, tb)
				e.check(c.name+" vs flash"+tag, got, e.getBF16(c.flsh, c.n), tb)
			}
			e.check("tc_attn_fwd lse"+tag, e.getF32(tb2.LSE, s.QHeads*s.T), lse, tf)

			sq := s.QHeads * s.T * s.T
			pb, sb, dsb := e.out(sq, 2), e.out(sq, 4), e.out(sq, 2)
			c := AttnBufs{Q: b.Q, K: b.K, V: b.V, O: e.out(nq, 2)}
			cg := AttnGrads{DO: g.DO, DQ: e.out(nq, 2), DK: e.out(nkv, 2), DV: e.out(nkv, 2)}
			e.must(ops.AttnClearFwd(c, pb, sb, s))
			e.must(ops.AttnClearBwd(c, cg, pb, sb, dsb, s))
			e.check("attn_clear_fwd"+tag, e.getBF16(c.O, nq), out, tb)
			e.check("attn_clear_bwd dq"+tag, e.getBF16(cg.DQ, nq), dq, tb)
			e.check("attn_clear_bwd dk"+tag, e.getBF16(cg.DK, nkv), dk, tb)
			e.check("attn_clear_bwd dv"+tag, e.getBF16(cg.DV, nkv), dv, tb)
		})
	}
}

// TestMMAProbe checks the mma.sync fragment layout the tensor-core kernels assume against
// a plain product: one warp, one m16n8k16 tile (the GPU check's smoke stage runs it first).
func TestMMAProbe(t *testing.T) {
	r := rng(t)
	a, b, c := randBF16(r, 16*16, 1), randBF16(r, 8*16, 1), randBF16(r, 16*8, 1)
	want := append([]float32(nil), c...)
	cuda.Gemm(false, true, 16, 8, 16, 1, a, b, 1, want)
	run(t, func(e *env) {
		d := e.f32(c)
		e.must(ops.MMAProbe(d, e.bf16(a), e.bf16(b)))
		e.check("mma_probe m16n8k16", e.getF32(d, 16*8), want, 1e-6)
	})
}

// TestTCRefusesBadShapes checks that the tensor-core calls refuse a head size they are
// not built for, uneven head groups and a misaligned tensor, before launching anything.
func TestTCRefusesBadShapes(t *testing.T) {
	for _, c := range []struct {
		s    cuda.AttnShape
		skew P
		want string
	}{
		{cuda.AttnShape{T: 16, QHeads: 2, KVHeads: 1, HeadDim: 48}, 0, "head_dim 48"},
		{cuda.AttnShape{T: 16, QHeads: 3, KVHeads: 2, HeadDim: 64}, 0, "positive multiple"},
		{cuda.AttnShape{T: 16, QHeads: 2, KVHeads: 1, HeadDim: 64}, 2, "not 16-byte aligned"},
	} {
		run(t, func(e *env) {
			n := c.s.T * c.s.QHeads * c.s.HeadDim
			q := e.out(n+8, 2) + c.skew
			b := AttnBufs{Q: q, K: e.out(n, 2), V: e.out(n, 2), O: e.out(n, 2), LSE: e.out(c.s.QHeads*c.s.T, 4)}
			g := AttnGrads{DO: e.out(n, 2), DQ: e.out(n, 2), DK: e.out(n, 2), DV: e.out(n, 2)}
			for name, err := range map[string]error{"TCFwd": ops.TCFwd(b, c.s), "TCBwd": ops.TCBwd(b, g, c.s)} {
				if !errors.Is(err, errclass.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					e.t.Errorf("%s(%+v) = %v, want an ErrInvalid containing %q", name, c.s, err, c.want)
				}
			}
		})
	}
}

// TestFlashRefusesBadHeads checks that both flash calls refuse a query head count that
// does not divide evenly among the kv heads, before launching anything: their outputs keep
// the poison bytes. Every buffer is sized for QHeads heads, so a kernel launched by mistake
// on an uneven split stays in bounds and shows up as written outputs rather than a crash.
func TestFlashRefusesBadHeads(t *testing.T) {
	for _, s := range []cuda.AttnShape{
		{T: 16, QHeads: 6, KVHeads: 4, HeadDim: 32},
		{T: 16, QHeads: 3, KVHeads: 2, HeadDim: 32},
		{T: 16, QHeads: 4, KVHeads: 0, HeadDim: 32},
	} {
		r := rng(t)
		n := s.T * s.QHeads * s.HeadDim
		want := fmt.Sprintf("%d query heads do not divide evenly among %d kv heads", s.QHeads, s.KVHeads)
		run(t, func(e *env) {
			q, k, v, dout := e.bf16(randBF16(r, n, 1)), e.bf16(randBF16(r, n, 1)), e.bf16(randBF16(r, n, 1)), e.bf16(randBF16(r, n, 1))
			fwd := AttnBufs{Q: q, K: k, V: v, O: e.out(n, 2), LSE: e.out(s.QHeads*s.T, 4)}
			bwd := AttnBufs{Q: q, K: k, V: v, O: e.bf16(randBF16(r, n, 1)), LSE: e.f32(randBF16(r, s.QHeads*s.T, 1))}
			g := AttnGrads{DO: dout, DQ: e.out(n, 2), DK: e.out(n, 2), DV: e.out(n, 2)}
			for name, err := range map[string]error{"FlashFwd": ops.FlashFwd(fwd, s), "FlashBwd": ops.FlashBwd(bwd, g, s)} {
				if !errors.Is(err, errclass.ErrInvalid) || !strings.Contains(err.Error(), want) {
					e.t.Errorf("%s(%+v) = %v, want an ErrInvalid containing %q", name, s, err, want)
				}
			}
			for _, o := range []struct {
				name  string
				p     P
				bytes int
			}{{"O", fwd.O, 2 * n}, {"LSE", fwd.LSE, 4 * s.QHeads * s.T}, {"DQ", g.DQ, 2 * n}, {"DK", g.DK, 2 * n}, {"DV", g.DV, 2 * n}} {
				b, err := Download[byte](e.x, devmem.Block{Ptr: o.p}, o.bytes)
				e.must(err)
				for i, c := range b {
					if c != 0xff {
						e.t.Errorf("%+v: %s was written at byte %d: a kernel ran", s, o.name, i)
						break
					}
				}
			}
		})
	}
}

func TestLMHeadCE(t *testing.T) {
	r := rng(t)
	const tn, d, v, chunk = 64, 256, 5000, 1024
	x, w := randBF16(r, tn*d, 1), randBF16(r, v*d, 0.1)
	targets := make([]int32, tn)
	sup := 0
	for i := range targets {
		targets[i] = int32(r.IntN(v))
		if i%5 == 0 {
			targets[i] = cuda.IgnoreTarget
		} else {
			sup++
		}
	}
	want := cuda.LMHeadCrossEntropy(x, w, targets, d, v)
	run(t, func(e *env) {
		out := CEOut{Loss: e.out(1, 4), LSE: e.out(tn, 4), PerToken: e.out(tn, 4), DX: e.out(tn*d, 2)}
		e.must(ops.LMHeadCE(CEArgs{X: e.bf16(x), W: e.bf16(w), Targets: e.i32(targets), T: tn, D: d, V: v,
			Chunk: chunk, Scale: 1 / float32(sup)}, out))
		e.check("lm_head_ce loss", e.getF32(out.Loss, 1), []float32{float32(want.Loss)}, tf)
		e.check("lm_head_ce lse", e.getF32(out.LSE, tn), want.LSE, tf)
		e.check("lm_head_ce dx", e.getBF16(out.DX, tn*d), want.DX, tb)
		// Without DX the loss-only walk over vocabulary chunks runs instead of the fused pass.
		lo := CEOut{Loss: e.out(1, 4), LSE: e.out(tn, 4), PerToken: e.out(tn, 4)}
		e.must(ops.LMHeadCE(CEArgs{X: e.bf16(x), W: e.bf16(w), Targets: e.i32(targets), T: tn, D: d, V: v,
			Chunk: chunk, Scale: 1 / float32(sup)}, lo))
		e.check("lm_head_ce loss (no dx)", e.getF32(lo.Loss, 1), []float32{float32(want.Loss)}, tf)
		e.check("lm_head_ce lse (no dx)", e.getF32(lo.LSE, tn), want.LSE, tf)
	})
}

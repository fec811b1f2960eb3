package fast

import (
	"math"
)

// attnBlock is the number of query rows one GEMM block covers.
const attnBlock = 64

// attnShape is causal grouped-query attention over q [t, nh·hd] and k, v
// [t, nkv·hd]: query head h reads key/value head h/(nh/nkv).
type attnShape struct {
	t, nh, nkv, hd int
	scale          float32
}

func (s attnShape) qd() int  { return s.nh * s.hd }
func (s attnShape) kvd() int { return s.nkv * s.hd }

// forward returns the output [t, nh·hd] and each row's log-sum-exp [nh, t].
// Work is spread over key/value heads, each worker owning a group's rows.
func (s attnShape) forward(q, k, v []float32) (out, lse []float32) {
	out = make([]float32, s.t*s.qd())
	lse = make([]float32, s.nh*s.t)
	s.each(func(h int, buf []float32) {
		kh := h / (s.nh / s.nkv)
		qh, kk, vv, oh := q[h*s.hd:], k[kh*s.hd:], v[kh*s.hd:], out[h*s.hd:]
		for i0 := 0; i0 < s.t; i0 += attnBlock {
			i1 := min(i0+attnBlock, s.t)
			p := s.probs(qh[i0*s.qd():], kk, i0, i1, buf, nil)
			for i := i0; i < i1; i++ {
				lse[h*s.t+i] = p.lse[i-i0]
			}
			// O[i0:i1] = P·V[0:i1]
			sgemm(false, false, i1-i0, s.hd, i1, 1, p.p, i1, vv, s.kvd(), 0, oh[i0*s.qd():], s.qd())
		}
	})
	return out, lse
}

type probBlock struct {
	p   []float32 // [rows, cols] probabilities, row-major with stride cols
	lse []float32
}

// probs computes softmax(scale·Q[i0:i1]·K[0:i1]ᵀ) with the causal mask into
// buf. With lse given it uses those log-sum-exps instead of computing them.
func (s attnShape) probs(qb, kk []float32, i0, i1 int, buf, lse []float32) probBlock {
	rows, cols := i1-i0, i1
	sc := buf[:rows*cols]
	sgemm(false, true, rows, cols, s.hd, s.scale, qb, s.qd(), kk, s.kvd(), 0, sc, cols)
	out := probBlock{p: sc, lse: lse}
	if lse == nil {
		out.lse = make([]float32, rows)
	}
	for r := 0; r < rows; r++ {
		row := sc[r*cols : (r+1)*cols]
		n := i0 + r + 1 // keys 0..i0+r are visible
		clear(row[n:])
		if lse == nil {
			m := maxOf(row[:n])
			sum := expShift(row[:n], m)
			inv := 1 / sum
			for j := range row[:n] {
				row[j] *= inv
			}
			out.lse[r] = m + float32(math.Log(float64(sum)))
			continue
		}
		expShift(row[:n], lse[r])
	}
	return out
}

// each runs f for every query head, the heads of one key/value group on one
// worker (so that their dK and dV updates never race), with a scratch block.
func (s attnShape) each(f func(h int, buf []float32)) {
	group := s.nh / s.nkv
	parts := split(s.nkv, workers(), 1)
	fork(len(parts)-1, func(i int) {
		buf := make([]float32, 2*attnBlock*s.t)
		for kh := parts[i]; kh < parts[i+1]; kh++ {
			for h := kh * group; h < (kh+1)*group; h++ {
				f(h, buf)
			}
		}
	})
}

// backward returns dq, dk, dv given the output gradient dout, in one pass
// over the blocks that recomputes the probabilities from the stored lse.
func (s attnShape) backward(q, k, v, out, lse, dout []float32) (dq, dk, dv []float32) {
	dq, dk, dv = make([]float32, len(q)), make([]float32, len(k)), make([]float32, len(v))
	s.each(func(h int, buf []float32) {
		kh := h / (s.nh / s.nkv)
		qh, kk, vv := q[h*s.hd:], k[kh*s.hd:], v[kh*s.hd:]
		dqh, dkh, dvh, doh, oh := dq[h*s.hd:], dk[kh*s.hd:], dv[kh*s.hd:], dout[h*s.hd:], out[h*s.hd:]
		for i0 := 0; i0 < s.t; i0 += attnBlock {
			i1 := min(i0+attnBlock, s.t)
			rows, cols := i1-i0, i1
			p := s.probs(qh[i0*s.qd():], kk, i0, i1, buf, lse[h*s.t+i0:h*s.t+i1]).p
			dp := buf[rows*cols : 2*rows*cols]
			// dV[0:i1] += Pᵀ·dO; dP = dO·V[0:i1]ᵀ
			sgemm(true, false, cols, s.hd, rows, 1, p, cols, doh[i0*s.qd():], s.qd(), 1, dvh, s.kvd())
			sgemm(false, true, rows, cols, s.hd, 1, doh[i0*s.qd():], s.qd(), vv, s.kvd(), 0, dp, cols)
			for r := 0; r < rows; r++ {
				o, g := oh[(i0+r)*s.qd():][:s.hd], doh[(i0+r)*s.qd():][:s.hd]
				var d float32
				for j := range o {
					d += o[j] * g[j]
				}
				pr, dr := p[r*cols:(r+1)*cols], dp[r*cols:(r+1)*cols]
				for j := range pr {
					dr[j] = pr[j] * (dr[j] - d)
				}
			}
			// dQ[i0:i1] = scale·dS·K[0:i1]; dK[0:i1] += scale·dSᵀ·Q[i0:i1]
			sgemm(false, false, rows, s.hd, cols, s.scale, dp, cols, kk, s.kvd(), 0, dqh[i0*s.qd():], s.qd())
			sgemm(true, false, cols, s.hd, rows, s.scale, dp, cols, qh[i0*s.qd():], s.qd(), 1, dkh, s.kvd())
		}
	})
	return dq, dk, dv
}

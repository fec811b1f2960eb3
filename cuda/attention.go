package cuda

import "math"

// AttnShape describes causal grouped-query attention over one sequence: q is
// [T, QHeads, HeadDim], k and v are [T, KVHeads, HeadDim], all row-major; query head h
// reads key/value head h / (QHeads/KVHeads).
type AttnShape struct {
	T, QHeads, KVHeads, HeadDim int
}

// Scale returns the softmax scale 1/sqrt(HeadDim).
func (s AttnShape) Scale() float64 { return 1 / math.Sqrt(float64(s.HeadDim)) }

func (s AttnShape) kvHead(h int) int { return h / (s.QHeads / s.KVHeads) }

// AttentionForward is the reference for both attention paths (softmax.cu between
// cuBLASLt products, and flash_attn.cu), in float64. It returns out [T, QHeads, HeadDim] and the log-sum-exp
// of each query row's scaled scores, lse [QHeads, T], which the backward pass uses.
func AttentionForward(q, k, v []float32, s AttnShape) (out, lse []float32) {
	out = make([]float32, s.T*s.QHeads*s.HeadDim)
	lse = make([]float32, s.QHeads*s.T)
	sc := s.Scale()
	p := make([]float64, s.T)
	acc := make([]float64, s.HeadDim)
	for h := 0; h < s.QHeads; h++ {
		kh := s.kvHead(h)
		for i := 0; i < s.T; i++ {
			qi := q[(i*s.QHeads+h)*s.HeadDim:]
			m := math.Inf(-1)
			for j := 0; j <= i; j++ {
				kj := k[(j*s.KVHeads+kh)*s.HeadDim:]
				var d float64
				for x := 0; x < s.HeadDim; x++ {
					d += float64(qi[x]) * float64(kj[x])
				}
				p[j] = d * sc
				m = math.Max(m, p[j])
			}
			var sum float64
			for j := 0; j <= i; j++ {
				p[j] = math.Exp(p[j] - m)
				sum += p[j]
			}
			for x := range acc {
				acc[x] = 0
			}
			for j := 0; j <= i; j++ {
				vj := v[(j*s.KVHeads+kh)*s.HeadDim:]
				w := p[j] / sum
				for x := 0; x < s.HeadDim; x++ {
					acc[x] += w * float64(vj[x])
				}
			}
			for x := 0; x < s.HeadDim; x++ {
				out[(i*s.QHeads+h)*s.HeadDim+x] = float32(acc[x])
			}
			lse[h*s.T+i] = float32(m + math.Log(sum))
		}
	}
	return out, lse
}

// AttentionBackward is the reference backward pass: given dout and the forward's inputs,
// out and lse it returns dq, dk and dv (dk and dv summed over the query heads that share
// a key/value head). It uses the flash-attention identity dS = P ∘ (dP − rowsum(dO ∘ O)).
func AttentionBackward(dout, q, k, v, out, lse []float32, s AttnShape) (dq, dk, dv []float32) {
	dq = make([]float32, len(q))
	dk64 := make([]float64, len(k))
	dv64 := make([]float64, len(v))
	sc := s.Scale()
	for h := 0; h < s.QHeads; h++ {
		kh := s.kvHead(h)
		for i := 0; i < s.T; i++ {
			qo := (i*s.QHeads + h) * s.HeadDim
			var delta float64
			for x := 0; x < s.HeadDim; x++ {
				delta += float64(dout[qo+x]) * float64(out[qo+x])
			}
			l := float64(lse[h*s.T+i])
			dqi := make([]float64, s.HeadDim)
			for j := 0; j <= i; j++ {
				ko := (j*s.KVHeads + kh) * s.HeadDim
				var d, dp float64
				for x := 0; x < s.HeadDim; x++ {
					d += float64(q[qo+x]) * float64(k[ko+x])
					dp += float64(dout[qo+x]) * float64(v[ko+x])
				}
				pij := math.Exp(d*sc - l)
				ds := pij * (dp - delta) * sc
				for x := 0; x < s.HeadDim; x++ {
					dv64[ko+x] += pij * float64(dout[qo+x])
					dk64[ko+x] += ds * float64(q[qo+x])
					dqi[x] += ds * float64(k[ko+x])
				}
			}
			for x := 0; x < s.HeadDim; x++ {
				dq[qo+x] = float32(dqi[x])
			}
		}
	}
	dk = make([]float32, len(k))
	dv = make([]float32, len(v))
	for i := range dk64 {
		dk[i] = float32(dk64[i])
		dv[i] = float32(dv64[i])
	}
	return dq, dk, dv
}

// CausalSoftmaxForward is the reference for softmax_causal_fwd (the clear attention path):
// rows of scores S [QHeads, T, T] already scaled; row i keeps columns j ≤ i and writes
// zeros above the diagonal.
func CausalSoftmaxForward(scores []float32, heads, t int) []float32 {
	p := make([]float32, len(scores))
	for r := 0; r < heads*t; r++ {
		i := r % t
		row := scores[r*t : (r+1)*t]
		m := math.Inf(-1)
		for j := 0; j <= i; j++ {
			m = math.Max(m, float64(row[j]))
		}
		var sum float64
		for j := 0; j <= i; j++ {
			sum += math.Exp(float64(row[j]) - m)
		}
		for j := 0; j <= i; j++ {
			p[r*t+j] = float32(math.Exp(float64(row[j])-m) / sum)
		}
	}
	return p
}

// CausalSoftmaxBackward is the reference for softmax_causal_bwd: dS = P ∘ (dP − rowsum(dP ∘ P)),
// multiplied by scale (the score scale folded into the gradient).
func CausalSoftmaxBackward(p, dp []float32, heads, t int, scale float64) []float32 {
	ds := make([]float32, len(p))
	for r := 0; r < heads*t; r++ {
		i := r % t
		var dot float64
		for j := 0; j <= i; j++ {
			dot += float64(p[r*t+j]) * float64(dp[r*t+j])
		}
		for j := 0; j <= i; j++ {
			ds[r*t+j] = float32(float64(p[r*t+j]) * (float64(dp[r*t+j]) - dot) * scale)
		}
	}
	return ds
}

package cuda

import "math"

// IgnoreTarget marks a token whose loss is masked (system, user, tool and prefix tokens).
const IgnoreTarget = -1

// CEResult is what the fused LM-head cross-entropy produces for one window.
type CEResult struct {
	Loss float64   // mean over supervised tokens; 0 when there are none
	LSE  []float32 // log-sum-exp of each token's logits
	DX   []float32 // gradient of Loss with respect to the hidden states [T, dim]
}

// LMHeadCrossEntropy is the reference for the fused LM head (crossentropy.cu): logits
// z = x·Wᵀ for hidden states x [T, dim] and head w [vocab, dim], loss per supervised token
// lse(z) − z[target], averaged over tokens whose target is not IgnoreTarget, and its
// gradient dx = Σ_v (softmax(z)_v − 1[v = target]) · w[v] / supervised. It materializes
// each token's logits, which the kernels never do.
func LMHeadCrossEntropy(x, w []float32, targets []int32, dim, vocab int) CEResult {
	t := len(targets)
	res := CEResult{LSE: make([]float32, t), DX: make([]float32, t*dim)}
	sup := 0
	for _, tg := range targets {
		if tg >= 0 {
			sup++
		}
	}
	z := make([]float64, vocab)
	g := make([]float64, dim)
	for i := 0; i < t; i++ {
		m := math.Inf(-1)
		for v := 0; v < vocab; v++ {
			var d float64
			for c := 0; c < dim; c++ {
				d += float64(x[i*dim+c]) * float64(w[v*dim+c])
			}
			z[v] = d
			m = math.Max(m, d)
		}
		var s float64
		for v := 0; v < vocab; v++ {
			s += math.Exp(z[v] - m)
		}
		lse := m + math.Log(s)
		res.LSE[i] = float32(lse)
		tg := targets[i]
		if tg < 0 || int(tg) >= vocab {
			continue
		}
		res.Loss += (lse - z[tg]) / float64(sup)
		for c := range g {
			g[c] = 0
		}
		for v := 0; v < vocab; v++ {
			p := math.Exp(z[v] - lse)
			if v == int(tg) {
				p--
			}
			for c := 0; c < dim; c++ {
				g[c] += p * float64(w[v*dim+c])
			}
		}
		for c := 0; c < dim; c++ {
			res.DX[i*dim+c] = float32(g[c] / float64(sup))
		}
	}
	return res
}

// CEState is the running state of the online softmax over vocabulary chunks, one entry
// per token: the running max M, the running sum S of exp(z − M), and the target's logit ZT.
type CEState struct {
	M, S, ZT []float32
}

// NewCEState returns the state before the first chunk (M = −Inf, S = 0, ZT = 0), as
// ce_init sets it.
func NewCEState(t int) CEState {
	st := CEState{M: make([]float32, t), S: make([]float32, t), ZT: make([]float32, t)}
	for i := range st.M {
		st.M[i] = float32(math.Inf(-1))
	}
	return st
}

// Update folds one chunk of logits [T, chunk] covering vocabulary ids [v0, v0+chunk) into
// the state, in float32 as ce_chunk_update does.
func (st CEState) Update(logits []float32, chunk, v0 int, targets []int32) {
	for i := range st.M {
		row := logits[i*chunk : (i+1)*chunk]
		cm := float32(math.Inf(-1))
		for _, z := range row {
			cm = max(cm, z)
		}
		var cs float64
		for _, z := range row {
			cs += math.Exp(float64(z - cm))
		}
		nm := max(st.M[i], cm)
		st.S[i] = float32(float64(st.S[i])*math.Exp(float64(st.M[i]-nm)) + cs*math.Exp(float64(cm-nm)))
		st.M[i] = nm
		if tg := int(targets[i]); tg >= v0 && tg < v0+chunk {
			st.ZT[i] = row[tg-v0]
		}
	}
}

// Finalize returns each token's lse and loss (0 for ignored tokens), as ce_finalize does.
func (st CEState) Finalize(targets []int32) (lse, loss []float32) {
	lse = make([]float32, len(st.M))
	loss = make([]float32, len(st.M))
	for i := range st.M {
		lse[i] = st.M[i] + float32(math.Log(float64(st.S[i])))
		if targets[i] >= 0 {
			loss[i] = lse[i] - st.ZT[i]
		}
	}
	return lse, loss
}

// CEChunkGrad is the reference for ce_chunk_grad: the gradient of the mean loss with
// respect to one chunk of logits, scale·(exp(z − lse) − 1[v = target]), zero for ignored
// tokens. scale is 1/supervised tokens.
func CEChunkGrad(logits, lse []float32, chunk, v0 int, targets []int32, scale float32) []float32 {
	d := make([]float32, len(logits))
	for i, tg := range targets {
		if tg < 0 {
			continue
		}
		for c := 0; c < chunk; c++ {
			p := math.Exp(float64(logits[i*chunk+c] - lse[i]))
			if int(tg) == v0+c {
				p--
			}
			d[i*chunk+c] = float32(p) * scale
		}
	}
	return d
}

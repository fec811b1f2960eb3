package cuda

import "math"

// AdamWConfig holds one optimizer step's hyperparameters (PyTorch AdamW semantics:
// decoupled weight decay applied as p ← p·(1 − lr·wd) before the Adam update).
type AdamWConfig struct {
	LR, Beta1, Beta2, Eps, WeightDecay float32
	Step                               int     // 1-based, for bias correction
	GradScale                          float32 // multiplies every gradient (clipping); 1 for none
}

// AdamW is the reference for adamw in adamw.cu: it updates the fp32 masters p and the
// moments m and v in place from gradients g.
func AdamW(p, m, v, g []float32, c AdamWConfig) {
	bc1 := 1 - math.Pow(float64(c.Beta1), float64(c.Step))
	bc2 := 1 - math.Pow(float64(c.Beta2), float64(c.Step))
	for i := range p {
		gi := float64(g[i]) * float64(c.GradScale)
		mi := float64(c.Beta1)*float64(m[i]) + (1-float64(c.Beta1))*gi
		vi := float64(c.Beta2)*float64(v[i]) + (1-float64(c.Beta2))*gi*gi
		pi := float64(p[i]) * (1 - float64(c.LR)*float64(c.WeightDecay))
		pi -= float64(c.LR) * (mi / bc1) / (math.Sqrt(vi/bc2) + float64(c.Eps))
		p[i], m[i], v[i] = float32(pi), float32(mi), float32(vi)
	}
}

// SumSquares is the reference for sumsq in gradnorm.cu: Σ x², in float64.
func SumSquares(xs ...[]float32) float64 {
	var s float64
	for _, x := range xs {
		for _, v := range x {
			s += float64(v) * float64(v)
		}
	}
	return s
}

// ClipScale returns the factor that scales gradients of global norm norm down to maxNorm
// (1 when already within it or when maxNorm ≤ 0), as PyTorch's clip_grad_norm_ does.
func ClipScale(norm, maxNorm float64) float32 {
	if maxNorm <= 0 || norm <= maxNorm {
		return 1
	}
	return float32(maxNorm / (norm + 1e-6))
}

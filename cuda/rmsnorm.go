package cuda

import "math"

// RMSNormForward is the reference for rmsnorm_fwd in rmsnorm.cu over rows of width dim.
// With a non-nil resid it first forms h = x + resid, rounded to bf16 as the kernel stores
// it; otherwise h = x. Then rstd = 1/sqrt(mean(h²)+eps) and y = bf16(h·rstd)·w, the
// Hugging Face order (normalize in fp32, cast to the input dtype, multiply by the weight).
func RMSNormForward(x, resid, w []float32, dim int, eps float32) (y, h, rstd []float32) {
	return rmsNormForward(x, resid, w, dim, eps, RoundBF16)
}

// rmsNormForward takes the bf16 rounding as a parameter so that tests can check the
// backward pass against finite differences of the unrounded function.
func rmsNormForward(x, resid, w []float32, dim int, eps float32, round func(float32) float32) (y, h, rstd []float32) {
	rows := len(x) / dim
	y = make([]float32, len(x))
	h = make([]float32, len(x))
	rstd = make([]float32, rows)
	for r := 0; r < rows; r++ {
		var ss float64
		for i := 0; i < dim; i++ {
			v := x[r*dim+i]
			if resid != nil {
				v = round(v + resid[r*dim+i])
			}
			h[r*dim+i] = v
			ss += float64(v) * float64(v)
		}
		rs := float32(1 / math.Sqrt(ss/float64(dim)+float64(eps)))
		rstd[r] = rs
		for i := 0; i < dim; i++ {
			y[r*dim+i] = round(h[r*dim+i]*rs) * w[i]
		}
	}
	return y, h, rstd
}

// RMSNormBackward is the reference for rmsnorm_bwd: the gradient with respect to h of
// y = (h·rstd)·w, with the weight frozen (no weight gradient), plus dresid when non-nil
// (the residual stream's gradient passing through the fused add).
// dh = rstd·(g − x̂·mean(g·x̂)) + dresid, where g = dy·w and x̂ = h·rstd.
func RMSNormBackward(dy, h, rstd, w, dresid []float32, dim int) []float32 {
	rows := len(h) / dim
	dh := make([]float32, len(h))
	for r := 0; r < rows; r++ {
		rs := float64(rstd[r])
		var dot float64
		for i := 0; i < dim; i++ {
			g := float64(dy[r*dim+i]) * float64(w[i])
			dot += g * float64(h[r*dim+i]) * rs
		}
		mean := dot / float64(dim)
		for i := 0; i < dim; i++ {
			g := float64(dy[r*dim+i]) * float64(w[i])
			xh := float64(h[r*dim+i]) * rs
			v := rs * (g - xh*mean)
			if dresid != nil {
				v += float64(dresid[r*dim+i])
			}
			dh[r*dim+i] = float32(v)
		}
	}
	return dh
}

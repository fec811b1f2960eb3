package cuda

// Gemm is the row-major reference for the cuBLASLt shim: C = alpha·op(A)·op(B) + beta·C,
// with op(A) [m, k] and op(B) [k, n]; transA means A is stored [k, m], transB that B is
// stored [n, k] (the usual x·Wᵀ of a linear layer). Accumulates in float64.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a, b []float32, beta float32, c []float32) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				av := a[i*k+p]
				if transA {
					av = a[p*m+i]
				}
				bv := b[p*n+j]
				if transB {
					bv = b[j*k+p]
				}
				s += float64(av) * float64(bv)
			}
			c[i*n+j] = float32(float64(alpha)*s + float64(beta)*float64(c[i*n+j]))
		}
	}
}

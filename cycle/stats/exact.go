package stats

import "math"

// MinBootstrapPairs is the number of decisive pairs from which WinRate
// uses the pair bootstrap; below it the bootstrap's percentiles collapse
// (three agreeing pairs give a zero-width interval) and WinRate uses the
// exact Clopper–Pearson interval instead.
const MinBootstrapPairs = 30

// ClopperPearson is the exact (Clopper–Pearson) two-sided interval for a
// binomial proportion with k successes in n trials at the given level:
// the bounds are the alpha/2 quantile of Beta(k, n-k+1) and the 1-alpha/2
// quantile of Beta(k+1, n-k), with 0 and 1 at the edges. It agrees with
// SciPy's binomtest(k, n).proportion_ci(method="exact").
func ClopperPearson(k, n int, level float64) (lo, hi float64) {
	if n <= 0 || k < 0 || k > n || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	alpha := 1 - level
	lo, hi = 0, 1
	if k > 0 {
		lo = betaQuantile(alpha/2, float64(k), float64(n-k+1))
	}
	if k < n {
		hi = betaQuantile(1-alpha/2, float64(k+1), float64(n-k))
	}
	return lo, hi
}

// betaQuantile inverts the regularized incomplete beta function I_x(a, b)
// by bisection: I_x is increasing in x, and 200 halvings reach the
// resolution of a float64 on [0, 1].
func betaQuantile(p, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if regIncBeta(a, b, mid, 1-mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

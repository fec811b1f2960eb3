package stats

import (
	"errors"
	"fmt"
	"math"
	"math/big"
)

// SignTest is the exact paired sign test's result.
type SignTest struct {
	N        int     `json:"n"`        // pairs with a difference (ties dropped)
	Positive int     `json:"positive"` // pairs where x > y
	Dropped  int     `json:"dropped"`  // tied pairs
	P        float64 `json:"p"`
}

// Sign is the exact two-sided sign test on paired values: pairs with
// x = y are dropped, and p = P(|K - n/2| ≥ |k - n/2|) for K ~ Binomial(n,
// 1/2), where k counts x > y among the n others
// (scipy.stats.binomtest(k, n, 0.5)). With every pair tied p is 1.
func Sign(x, y []float64) (SignTest, error) {
	if len(x) != len(y) {
		return SignTest{}, fmt.Errorf("sign test needs paired values (got %d and %d)", len(x), len(y))
	}
	var r SignTest
	for i := range x {
		switch {
		case math.IsNaN(x[i]) || math.IsNaN(y[i]):
			return SignTest{}, errors.New("sign test: a value is NaN")
		case x[i] > y[i]:
			r.Positive++
		case x[i] < y[i]:
		default:
			r.Dropped++
			continue
		}
		r.N++
	}
	r.P = binomTwoSidedHalf(r.Positive, r.N)
	return r, nil
}

// SignTaskMeans is Sign over per-task means: x[i] and y[i] are the trial
// scores of task i under the two conditions (the paper's unit: tasks).
func SignTaskMeans(x, y [][]float64) (SignTest, error) {
	if len(x) != len(y) {
		return SignTest{}, fmt.Errorf("sign test needs the same tasks on both sides (got %d and %d)", len(x), len(y))
	}
	mx, my := make([]float64, len(x)), make([]float64, len(y))
	for i := range x {
		if len(x[i]) == 0 || len(y[i]) == 0 {
			return SignTest{}, fmt.Errorf("task %d has no trials", i)
		}
		mx[i], my[i] = Mean(x[i]), Mean(y[i])
	}
	return Sign(mx, my)
}

// binomTwoSidedHalf is min(1, 2·min(P(K ≤ k), P(K ≥ k))) for K ~ Bin(n, 1/2),
// computed exactly.
func binomTwoSidedHalf(k, n int) float64 {
	if n == 0 {
		return 1
	}
	tail := min(k, n-k) // the smaller tail by symmetry: P(K ≤ tail)
	sum := new(big.Int)
	for i := 0; i <= tail; i++ {
		sum.Add(sum, new(big.Int).Binomial(int64(n), int64(i)))
	}
	sum.Lsh(sum, 1)
	p, _ := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n))).Float64()
	return math.Min(1, p)
}

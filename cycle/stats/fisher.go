package stats

import (
	"fmt"
	"math"
	"math/big"
)

// Fisher is Fisher's exact test's result on a 2×2 table.
type Fisher struct {
	OddsRatio float64 `json:"odds_ratio"` // a·d/(b·c): +Inf when b·c = 0, NaN when a row or column is empty
	P         float64 `json:"p"`
}

// FisherExact is the two-sided Fisher exact test on the table
// [[a, b], [c, d]] with SciPy's convention (scipy.stats.fisher_exact): with
// the margins fixed, a is hypergeometric, and p is the total probability of
// the tables no more likely than the observed one. The probabilities are
// compared and summed exactly (integers), so tables that are equally
// likely by symmetry are always counted.
func FisherExact(a, b, c, d int) (Fisher, error) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return Fisher{}, fmt.Errorf("fisher exact test: negative count in [[%d %d] [%d %d]]", a, b, c, d)
	}
	res := Fisher{OddsRatio: oddsRatio(a, b, c, d)}
	r1, r2, c1 := a+b, c+d, a+c
	// Up to the common factor 1/C(r1+r2, c1), P(a = x) ∝ C(r1, x)·C(r2, c1-x).
	weight := func(x int) *big.Int {
		w := new(big.Int).Binomial(int64(r1), int64(x))
		return w.Mul(w, new(big.Int).Binomial(int64(r2), int64(c1-x)))
	}
	obs := weight(a)
	sum := new(big.Int)
	for x := max(0, c1-r2); x <= min(c1, r1); x++ {
		if w := weight(x); w.Cmp(obs) <= 0 {
			sum.Add(sum, w)
		}
	}
	total := new(big.Int).Binomial(int64(r1+r2), int64(c1))
	p, _ := new(big.Rat).SetFrac(sum, total).Float64()
	res.P = math.Min(1, p)
	return res, nil
}

func oddsRatio(a, b, c, d int) float64 {
	if a+b == 0 || c+d == 0 || a+c == 0 || b+d == 0 {
		return math.NaN()
	}
	if b == 0 || c == 0 {
		return math.Inf(1)
	}
	return float64(a) * float64(d) / (float64(b) * float64(c))
}

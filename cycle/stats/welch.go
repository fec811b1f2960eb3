package stats

import (
	"errors"
	"fmt"
	"math"
)

// TTest is a two-sided t-test's result.
type TTest struct {
	T  float64 `json:"t"`
	DF float64 `json:"df"`
	P  float64 `json:"p"`
}

// Welch is the two-sided Welch t-test of equal means for samples x and y
// with unequal variances (scipy.stats.ttest_ind(x, y, equal_var=False)):
// t = (x̄ - ȳ)/√(s²x/nx + s²y/ny), Welch–Satterthwaite degrees of freedom,
// p from Student's t. Each sample needs two values, and the two together
// some spread.
func Welch(x, y []float64) (TTest, error) {
	if len(x) < 2 || len(y) < 2 {
		return TTest{}, fmt.Errorf("welch t-test needs at least 2 values per sample (got %d and %d)", len(x), len(y))
	}
	mx, vx, err := meanVar(x)
	if err != nil {
		return TTest{}, err
	}
	my, vy, err := meanVar(y)
	if err != nil {
		return TTest{}, err
	}
	ex, ey := vx/float64(len(x)), vy/float64(len(y))
	se2 := ex + ey
	if se2 == 0 {
		return TTest{}, errors.New("welch t-test: both samples are constant; t is undefined")
	}
	t := (mx - my) / math.Sqrt(se2)
	df := se2 * se2 / (ex*ex/float64(len(x)-1) + ey*ey/float64(len(y)-1))
	return TTest{T: t, DF: df, P: studentTTwoSided(t, df)}, nil
}

// meanVar is the mean and the unbiased (n-1) variance, two-pass.
func meanVar(x []float64) (mean, variance float64, err error) {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, 0, fmt.Errorf("sample holds %v", v)
		}
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1), nil
}

// Mean is the arithmetic mean of x (NaN for none).
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

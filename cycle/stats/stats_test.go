package stats

import (
	"fmt"
	"math"
	"testing"
)

// TestIncompleteBetaClosedForms checks I_x(a, b) and the t distribution
// where they have closed forms: I_x(1,1) = x, I_x(a,1) = x^a,
// I_x(1,b) = 1-(1-x)^b; t with 1 df is Cauchy, with 2 df 1-|t|/√(2+t²).
func TestIncompleteBetaClosedForms(t *testing.T) {
	for _, x := range []float64{1e-6, 0.01, 0.3, 0.5, 0.77, 0.99, 1 - 1e-6} {
		for _, c := range []struct {
			a, b, want float64
		}{{1, 1, x}, {3, 1, math.Pow(x, 3)}, {0.5, 1, math.Sqrt(x)}, {1, 4, -math.Expm1(4 * math.Log1p(-x))}} {
			if got := regIncBeta(c.a, c.b, x, 1-x); relErr(got, c.want) > 1e-12 {
				t.Errorf("I_%v(%v, %v) = %.17g, want %.17g", x, c.a, c.b, got, c.want)
			}
		}
	}
	for _, tt := range []float64{0.1, 1, 3, 50, 1e4, 1e8} {
		// Written without cancellation: 1-(2/π)atan t = (2/π)atan(1/t) and
		// 1-t/√(2+t²) = 2/(√(2+t²)(√(2+t²)+t)).
		if got, want := studentTTwoSided(tt, 1), 2/math.Pi*math.Atan(1/tt); relErr(got, want) > 1e-12 {
			t.Errorf("df 1, t %v: p %.17g, want %.17g", tt, got, want)
		}
		r := math.Sqrt(2 + tt*tt)
		if got, want := studentTTwoSided(-tt, 2), 2/(r*(r+tt)); relErr(got, want) > 1e-12 {
			t.Errorf("df 2, t %v: p %.17g, want %.17g", tt, got, want)
		}
	}
	// Symmetry I_x(a,b) = 1 - I_{1-x}(b,a) away from the branch point.
	for _, c := range [][3]float64{{2.5, 7, 0.2}, {30, 0.5, 0.9}, {100, 100, 0.45}} {
		a, b, x := c[0], c[1], c[2]
		if d := regIncBeta(a, b, x, 1-x) + regIncBeta(b, a, 1-x, x) - 1; math.Abs(d) > 1e-13 {
			t.Errorf("I_%v(%v,%v) + I_%v(%v,%v) - 1 = %v", x, a, b, 1-x, b, a, d)
		}
	}
}

// TestSignPaper: 8 of 11 non-tied tasks, one tied, is p = 232/1024 = 0.2265625.
func TestSignPaper(t *testing.T) {
	x := []float64{5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3, 4}
	y := []float64{4, 5, 6, 7, 8, 9, 10, 11, 2, 3, 4, 4}
	r, err := Sign(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 11 || r.Positive != 8 || r.Dropped != 1 || r.P != 0.2265625 {
		t.Errorf("got %+v, want 8 of 11, 1 dropped, p 0.2265625", r)
	}
	if r, _ := Sign([]float64{1, 2}, []float64{1, 2}); r.P != 1 || r.N != 0 {
		t.Errorf("all tied: %+v, want p 1", r)
	}
	if _, err := Sign([]float64{1}, nil); err == nil {
		t.Error("unpaired: no error")
	}
	if _, err := SignTaskMeans([][]float64{{1}}, [][]float64{{}}); err == nil {
		t.Error("task without trials: no error")
	}
}

func TestFisherKnown(t *testing.T) {
	// The tea-tasting table: p = 34/70·… = 0.4857142857 (two-sided).
	r, err := FisherExact(3, 1, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := 34.0 / 70; relErr(r.P, want) > 1e-15 || r.OddsRatio != 9 {
		t.Errorf("tea: %+v, want p %v, odds 9", r, want)
	}
	if r, _ := FisherExact(0, 0, 3, 4); r.P != 1 || !math.IsNaN(r.OddsRatio) {
		t.Errorf("empty row: %+v", r)
	}
	if _, err := FisherExact(-1, 0, 0, 0); err == nil {
		t.Error("negative count: no error")
	}
}

func TestWelchErrors(t *testing.T) {
	for _, c := range [][2][]float64{{{1}, {1, 2}}, {{1, 1}, {2, 2}}, {{1, math.NaN()}, {1, 2}}} {
		if _, err := Welch(c[0], c[1]); err == nil {
			t.Errorf("welch %v: no error", c)
		}
	}
	// One constant sample is fine: the other supplies the variance.
	if r, err := Welch([]float64{1, 1, 1}, []float64{2, 3, 4}); err != nil || !(r.P > 0 && r.P < 1) {
		t.Errorf("one constant sample: %+v %v", r, err)
	}
}

func TestWinRate(t *testing.T) {
	var one, six []Verdict
	outcomes := []Outcome{Win, Win, Loss, Win, Tie, Loss, Win, Win, Loss, Win, Win, Win}
	for i, o := range outcomes {
		pair := string(rune('a' + i))
		one = append(one, Verdict{pair, o})
		for j := 0; j < 6; j++ {
			six = append(six, Verdict{pair, o})
		}
	}
	r1, err := WinRate(one, WinRateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r6, _ := WinRate(six, WinRateOptions{})
	if r1.Wins != 8 || r1.Losses != 3 || r1.Ties != 1 || r1.Pairs != 12 || r1.Rate != 8.0/11 {
		t.Errorf("one verdict per pair: %+v", r1)
	}
	if !(r1.Low < r1.Rate && r1.Rate < r1.High) || r1.Low < 0 || r1.High > 1 {
		t.Errorf("interval [%v, %v] around %v", r1.Low, r1.High, r1.Rate)
	}
	// Six identical verdicts per pair are one sample each: same rate, same interval.
	if r6.Rate != r1.Rate || r6.Low != r1.Low || r6.High != r1.High || r6.Wins != 48 {
		t.Errorf("six verdicts per pair narrowed the interval: %+v vs %+v", r6, r1)
	}
	// Treating the 72 verdicts as independent pairs would narrow it.
	var flat []Verdict
	for i, v := range six {
		flat = append(flat, Verdict{string(rune(i)), v.Outcome})
	}
	rf, _ := WinRate(flat, WinRateOptions{})
	if !(rf.High-rf.Low < r1.High-r1.Low) {
		t.Errorf("72 independent verdicts: width %v, 12 pairs: %v; want narrower", rf.High-rf.Low, r1.High-r1.Low)
	}
	if r, _ := WinRate([]Verdict{{"a", Tie}}, WinRateOptions{}); !math.IsNaN(r.Rate) {
		t.Errorf("only ties: rate %v, want NaN", r.Rate)
	}
	if _, err := WinRate(nil, WinRateOptions{}); err == nil {
		t.Error("no verdicts: no error")
	}
	if _, err := WinRate(one, WinRateOptions{Level: 1.5}); err == nil {
		t.Error("level 1.5: no error")
	}
}

// TestWinRateSmallAndLarge: 3 agreeing pairs (6 verdicts each) gave the
// percentile bootstrap's zero-width 100% [100%, 100%]; they get the exact
// interval, about [29%, 100%], and its name. 300 pairs keep the bootstrap.
func TestWinRateSmallAndLarge(t *testing.T) {
	var small []Verdict
	for p := 0; p < 3; p++ {
		for j := 0; j < 6; j++ {
			small = append(small, Verdict{fmt.Sprint("pair", p), Win})
		}
	}
	r, err := WinRate(small, WinRateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != ExactMethod || r.Rate != 1 || math.Abs(r.Low-math.Pow(0.025, 1.0/3)) > 1e-12 || r.High != 1 {
		t.Errorf("3 pairs: %v [%v, %v] by %q", r.Rate, r.Low, r.High, r.Method)
	}
	var large []Verdict
	for p := 0; p < 300; p++ {
		o := Win
		if p%3 == 0 {
			o = Loss
		}
		large = append(large, Verdict{fmt.Sprint("pair", p), o})
	}
	r, err = WinRate(large, WinRateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != BootstrapMethod || r.Pairs != 300 || !(r.Low > 0.6 && r.Low < r.Rate && r.Rate < r.High && r.High < 0.73) {
		t.Errorf("300 pairs: %v [%v, %v] by %q", r.Rate, r.Low, r.High, r.Method)
	}
	lo, hi := ClopperPearson(200, 300, 0.95)
	if math.Abs(lo-r.Low) > 0.02 || math.Abs(hi-r.High) > 0.02 {
		t.Errorf("300 pairs: bootstrap [%v, %v] far from exact [%v, %v]", r.Low, r.High, lo, hi)
	}
}

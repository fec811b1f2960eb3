package stats

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "regenerate testdata/scipy_golden.json with python3-scipy")

const goldenFile = "testdata/scipy_golden.json"

// python is Debian's interpreter, where python3-scipy installs.
const python = "/usr/bin/python3"

// golden is what testdata/scipy_golden.py writes.
type golden struct {
	Generator string `json:"generator"`
	SciPy     string `json:"scipy"`
	Welch     []struct {
		Name     string
		X, Y     []float64
		T, DF, P float64
	}
	Fisher []struct {
		Table         [2][2]int
		P             float64
		OddsRatio     *float64 `json:"odds_ratio"`
		OddsRatioKind string   `json:"odds_ratio_kind"`
	}
	Sign []struct {
		Name        string
		X, Y        [][]float64
		N, Positive int
		P           float64
	}
	Exact []struct {
		K, N             int
		Level, Low, High float64
	}
}

// runSciPy runs the generator; ok is false when python3-scipy is missing.
func runSciPy(t *testing.T, seed, out string) bool {
	t.Helper()
	if err := exec.Command(python, "-c", "import scipy.stats").Run(); err != nil {
		return false
	}
	cmd := exec.Command(python, "testdata/scipy_golden.py", "--seed", seed, "--out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scipy_golden.py: %v\n%s", err, b)
	}
	return true
}

func readGolden(t *testing.T, path string) golden {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(g.Welch) < 20 || len(g.Fisher) < 20 || len(g.Sign) < 20 || len(g.Exact) < 20 {
		t.Fatalf("%s: %d welch, %d fisher, %d sign, %d exact cases; want at least 20 each", path, len(g.Welch), len(g.Fisher), len(g.Sign), len(g.Exact))
	}
	return g
}

// TestSciPyGolden compares every test with SciPy's answers checked in under
// testdata (regenerate: go test ./cycle/stats -run TestSciPyGolden -update).
func TestSciPyGolden(t *testing.T) {
	if *update {
		if !runSciPy(t, "1", goldenFile) {
			t.Fatal("-update needs python3 with scipy (Debian: apt-get install python3-scipy)")
		}
	}
	compareGolden(t, readGolden(t, goldenFile))
}

// TestSciPyLive generates fresh inputs (another seed) with SciPy when it is
// installed and compares again.
func TestSciPyLive(t *testing.T) {
	out := filepath.Join(t.TempDir(), "live.json")
	if !runSciPy(t, "20261201", out) {
		t.Skip("python3-scipy is not installed")
	}
	compareGolden(t, readGolden(t, out))
}

const goldenTol = 1e-9

func relErr(got, want float64) float64 {
	if got == want {
		return 0
	}
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-300)
}

func compareGolden(t *testing.T, g golden) {
	t.Helper()
	worst := map[string]float64{}
	check := func(what, name string, got, want float64) {
		d := relErr(got, want)
		worst[what] = math.Max(worst[what], d)
		if d > goldenTol {
			t.Errorf("%s %s: %.17g, scipy %.17g (relative %.3g)", what, name, got, want, d)
		}
	}
	for _, c := range g.Welch {
		r, err := Welch(c.X, c.Y)
		if err != nil {
			t.Errorf("welch %s: %v", c.Name, err)
			continue
		}
		check("welch t", c.Name, r.T, c.T)
		check("welch df", c.Name, r.DF, c.DF)
		check("welch p", c.Name, r.P, c.P)
	}
	for _, c := range g.Fisher {
		tb := c.Table
		r, err := FisherExact(tb[0][0], tb[0][1], tb[1][0], tb[1][1])
		if err != nil {
			t.Errorf("fisher %v: %v", tb, err)
			continue
		}
		name := jsonString(tb)
		check("fisher p", name, r.P, c.P)
		switch c.OddsRatioKind {
		case "finite":
			check("fisher odds ratio", name, r.OddsRatio, *c.OddsRatio)
		case "inf":
			if !math.IsInf(r.OddsRatio, 1) {
				t.Errorf("fisher %s: odds ratio %v, scipy inf", name, r.OddsRatio)
			}
		case "nan":
			if !math.IsNaN(r.OddsRatio) {
				t.Errorf("fisher %s: odds ratio %v, scipy nan", name, r.OddsRatio)
			}
		}
	}
	for _, c := range g.Sign {
		r, err := SignTaskMeans(c.X, c.Y)
		if err != nil {
			t.Errorf("sign %s: %v", c.Name, err)
			continue
		}
		if r.N != c.N || r.Positive != c.Positive {
			t.Errorf("sign %s: %d of %d, scipy's input %d of %d", c.Name, r.Positive, r.N, c.Positive, c.N)
		}
		check("sign p", c.Name, r.P, c.P)
	}
	for _, c := range g.Exact {
		lo, hi := ClopperPearson(c.K, c.N, c.Level)
		name := fmt.Sprintf("%d/%d at %v", c.K, c.N, c.Level)
		check("clopper-pearson low", name, lo, c.Low)
		check("clopper-pearson high", name, hi, c.High)
	}
	t.Logf("%s (scipy %s): max relative deviation %v", g.Generator, g.SciPy, worst)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

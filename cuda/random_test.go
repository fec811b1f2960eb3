package cuda

import (
	"math"
	"testing"
)

func TestNormalAt(t *testing.T) {
	const n = 200000
	var sum, sq float64
	for i := uint64(0); i < n; i++ {
		v := float64(NormalAt(7, i, 2))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("element %d is %v", i, v)
		}
		sum += v
		sq += v * v
	}
	mean, sd := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n))
	if math.Abs(mean) > 0.02 || math.Abs(sd-2) > 0.02 {
		t.Errorf("mean %.4f sd %.4f, want about 0 and 2", mean, sd)
	}
	if NormalAt(7, 5, 1) == NormalAt(8, 5, 1) {
		t.Error("seed does not change the stream")
	}
}

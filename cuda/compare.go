package cuda

import (
	"fmt"
	"math"
)

// Tolerances the GPU check applies: relative L2 error for bf16 and fp32 outputs.
const (
	DefaultTolBF16 = 1e-2
	DefaultTolF32  = 1e-5
)

// RelErr returns ‖got − want‖₂ / ‖want‖₂ computed in float64. It returns +Inf when the
// lengths differ or got holds a NaN or Inf, so that a broken output never passes.
// When want is all zeros the absolute norm of the difference is returned.
func RelErr(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.IsInf(g, 0) {
			return math.Inf(1)
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// CheckClose returns an error naming the output when RelErr(got, want) exceeds tol.
func CheckClose(name string, got, want []float32, tol float64) error {
	if e := RelErr(got, want); !(e <= tol) {
		return fmt.Errorf("%s: relative error %.3g exceeds %.1g", name, e, tol)
	}
	return nil
}

package optim

import (
	"math"
	"testing"

	"github.com/mass-dev/mass/trainer/lora"
)

func TestSchedule(t *testing.T) {
	c := Config{LR: 1, Warmup: 5, TotalSteps: 105, Floor: 0.1}
	tests := []struct {
		step int
		want float64
	}{{0, 0.2}, {4, 1}, {5, 1}, {55, 0.55}, {105, 0.1}, {500, 0.1}}
	for _, tc := range tests {
		if got := c.LRAt(tc.step); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("LRAt(%d) = %v, want %v", tc.step, got, tc.want)
		}
	}
}

// TestAdamWFirstStep checks the closed form of Adam's first step: each
// parameter moves by lr·sign(g) (bias-corrected m/√v = g/|g|).
func TestAdamWFirstStep(t *testing.T) {
	p := &lora.Param{Name: "x", Shape: []int{3}, Data: []float32{1, 1, 1}, Grad: []float32{0.5, -2, 1e-3}}
	a := &lora.Adapter{Params: []*lora.Param{p}}
	o := NewAdamW(Config{Beta1: 0.9, Beta2: 0.999, Eps: 1e-12}, a)
	if err := o.Step(a.Params, 0.1); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{0.9, 1.1, 0.9} {
		if got := p.Data[i]; math.Abs(float64(got-want)) > 1e-5 {
			t.Errorf("param[%d] = %v, want %v", i, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	p := &lora.Param{Grad: []float32{3, 4}}
	if got, want := ClipGradNorm([]*lora.Param{p}, 1), 5.0; got != want {
		t.Errorf("norm = %v, want %v", got, want)
	}
	if got, want := math.Hypot(float64(p.Grad[0]), float64(p.Grad[1])), 1.0; math.Abs(got-want) > 1e-5 {
		t.Errorf("clipped norm = %v, want %v", got, want)
	}
}

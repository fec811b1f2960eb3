package cudabackend

import (
	"math"
	"testing"
)

func TestFrozenParams(t *testing.T) {
	// Qwen3-0.6B has 0.44B non-embedding parameters and a 0.16B tied embedding (model card);
	// the head counts once as a product.
	tests := []struct {
		name     string
		min, max float64
	}{
		{"0.6b", 0.58e9, 0.60e9},
		{"4b", 3.99e9, 4.03e9},
	}
	for _, tc := range tests {
		c, ok := Qwen3Shape(tc.name)
		if !ok {
			t.Fatalf("no shape %s", tc.name)
		}
		if got := FrozenParams(c); got < tc.min || got > tc.max {
			t.Errorf("%s: %.4g product parameters, want in [%.3g, %.3g]", tc.name, got, tc.min, tc.max)
		}
	}
	if _, ok := Qwen3Shape("7b"); ok {
		t.Error("unknown shape accepted")
	}
}

func TestMFU(t *testing.T) {
	c, _ := Qwen3Shape("0.6b")
	per := TrainFLOPsPerToken(c, 4096)
	attn := 6.0 * 28 * 16 * 128 * 4097
	if got, want := per, 4*FrozenParams(c)+attn; math.Abs(got-want) > 1 {
		t.Errorf("FLOPs per token = %v, want %v", got, want)
	}
	// tokens/s that would exactly reach the peak give MFU 1.
	if got := MFU(c, 4096, DefaultPeakTFLOPs*1e12/per, DefaultPeakTFLOPs); math.Abs(got-1) > 1e-12 {
		t.Errorf("MFU at peak = %v, want 1", got)
	}
}

package cuda

import (
	"math"
	"testing"
)

func TestToBF16(t *testing.T) {
	tests := []struct {
		in   float32
		want BF16
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{0, 0},
		{1 + 1.0/256, 0x3f80}, // tie, rounds to even (down)
		{1 + 3.0/256, 0x3f82}, // tie, rounds to even (up)
		{1 + 1.5/256, 0x3f81}, // above the tie
		{float32(math.Inf(1)), 0x7f80},
		{3.3895314e38, 0x7f7f}, // largest finite bf16 stays finite
	}
	for _, tc := range tests {
		if got := ToBF16(tc.in); got != tc.want {
			t.Errorf("ToBF16(%v) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if got := ToBF16(float32(math.NaN())).Float32(); !math.IsNaN(float64(got)) {
		t.Errorf("NaN became %v", got)
	}
}

func TestBF16RoundTrip(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		h := BF16(b)
		f := h.Float32()
		if math.IsNaN(float64(f)) {
			continue
		}
		if got := ToBF16(f); got != h {
			t.Fatalf("round trip of %#04x gave %#04x", b, got)
		}
	}
	xs := []float32{0.1, -3.7, 1e-3}
	got := DecodeBF16(EncodeBF16(xs))
	if e := RelErr(got, xs); e > 4e-3 {
		t.Errorf("bf16 round trip relative error %v, want ≤ 4e-3", e)
	}
}

func TestRelErr(t *testing.T) {
	tests := []struct {
		got, want []float32
		ok        bool
	}{
		{[]float32{1, 2}, []float32{1, 2}, true},
		{[]float32{1, 2.1}, []float32{1, 2}, false},
		{[]float32{float32(math.NaN()), 2}, []float32{1, 2}, false},
		{[]float32{1}, []float32{1, 2}, false},
	}
	for i, tc := range tests {
		if got := CheckClose("x", tc.got, tc.want, 1e-3) == nil; got != tc.ok {
			t.Errorf("case %d: passed = %v, want %v", i, got, tc.ok)
		}
	}
}

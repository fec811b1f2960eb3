//go:build masscudaemu && !masscuda

package cublaslt

import (
	"errors"
	"testing"

	"github.com/mass-dev/mass/cuda/emu"
	"github.com/mass-dev/mass/errclass"
)

func TestAlignOf(t *testing.T) {
	tests := []struct {
		p      uintptr
		stride int64
		elem   int64
		batch  int
		want   int
	}{
		{0x7f0000000000, 0, 2, 1, 256},
		{0x7f0000000080, 0, 2, 1, 128},       // head offset 64 bf16 at head_dim 64
		{0x7f0000000000 + 16*2, 0, 2, 1, 32}, // head_dim 16
		{0x7f0000000000, 4096 * 64, 2, 32, 256},
		{0x7f0000000000, 40 * 16, 2, 4, 256},
		{0x7f0000000000, 40 * 12, 2, 4, 64}, // 960-byte batch stride
		{0x7f0000000000, 7, 4, 3, 4},        // odd fp32 stride
		{0x7f0000000002, 0, 2, 1, 2},
	}
	for _, tc := range tests {
		if got := alignOf(tc.p, tc.stride, tc.elem, tc.batch); got != tc.want {
			t.Errorf("alignOf(%#x, stride %d×%d B, batch %d) = %d, want %d", tc.p, tc.stride, tc.elem, tc.batch, got, tc.want)
		}
	}
}

// TestPlanCache checks that a plan is built once per shape and alignment: a second product
// of the same shape reuses it, one whose A starts 32 bytes into its buffer gets its own.
// A product with an empty dimension is refused as ErrInvalid, before a plan is built.
func TestMatmulRefusesEmptyDims(t *testing.T) {
	h, _ := Open("")
	for _, g := range []Gemm{{M: 0, N: 4, K: 4}, {M: 4, N: -1, K: 4}, {M: 4, N: 4, K: 0}} {
		if err := h.Matmul(g, 0, 1<<20, 0); !errors.Is(err, errclass.ErrInvalid) {
			t.Errorf("Matmul %dx%dx%d = %v, want ErrInvalid", g.M, g.N, g.K, err)
		}
	}
	if h.Plans() != 0 {
		t.Errorf("refused products built %d plans", h.Plans())
	}
}

func TestPlanCache(t *testing.T) {
	h, _ := Open("")
	a, b, c := emu.BF16(make([]float32, 64*64+256)), emu.BF16(make([]float32, 64*64)), emu.F32(make([]float32, 64*64))
	defer a.Free()
	defer b.Free()
	defer c.Free()
	pa := uintptr(emu.P(a))
	pa += (256 - pa%256) % 256 // a 256-byte-aligned A inside the buffer
	g := Gemm{M: 64, N: 64, K: 32, A: pa, B: uintptr(emu.P(b)), C: uintptr(emu.P(c)), Alpha: 1}
	for range 3 {
		if err := h.Matmul(g, 0, 1<<20, 0); err != nil {
			t.Fatal(err)
		}
	}
	if h.Plans() != 1 {
		t.Fatalf("3 equal products built %d plans, want 1", h.Plans())
	}
	g.A += 32
	if err := h.Matmul(g, 0, 1<<20, 0); err != nil {
		t.Fatal(err)
	}
	if h.Plans() != 2 || g.key(1<<20).alignA != 32 {
		t.Fatalf("a 32-byte-aligned A: %d plans (want 2), align %d (want 32)", h.Plans(), g.key(1<<20).alignA)
	}
	g.N = 48
	if err := h.Matmul(g, 0, 1<<20, 0); err != nil {
		t.Fatal(err)
	}
	if h.Plans() != 3 {
		t.Fatalf("a new shape: %d plans, want 3", h.Plans())
	}
}

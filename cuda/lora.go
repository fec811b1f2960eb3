package cuda

// LoRAShape describes one LoRA-adapted linear layer y = x·Wᵀ + Scale·(x·Aᵀ)·Bᵀ with
// x [T, In], frozen W [Out, In], A [Rank, In] and B [Out, Rank].
type LoRAShape struct {
	T, In, Out, Rank int
	Scale            float32 // lora_alpha / r
}

// LoRAForward is the reference for the LoRA path (cuBLASLt GEMMs plus lora.cu); it also
// returns the low-rank activation xa = x·Aᵀ [T, Rank] that the backward pass reuses.
func LoRAForward(x, w, a, b []float32, s LoRAShape) (y, xa []float32) {
	y = make([]float32, s.T*s.Out)
	Gemm(false, true, s.T, s.Out, s.In, 1, x, w, 0, y)
	xa = make([]float32, s.T*s.Rank)
	Gemm(false, true, s.T, s.Rank, s.In, 1, x, a, 0, xa)
	Gemm(false, true, s.T, s.Out, s.Rank, s.Scale, xa, b, 1, y)
	return y, xa
}

// LoRABackward returns dx (through W and the adapter), dA and dB for the upstream
// gradient dy; W gets no gradient.
//
//	dB = Scale·dyᵀ·xa, dA = Scale·(dy·B)ᵀ·x, dx = dy·W + Scale·(dy·B)·A.
func LoRABackward(dy, x, w, a, b, xa []float32, s LoRAShape) (dx, da, db []float32) {
	dx = make([]float32, s.T*s.In)
	Gemm(false, false, s.T, s.In, s.Out, 1, dy, w, 0, dx)
	dyb := make([]float32, s.T*s.Rank)
	Gemm(false, false, s.T, s.Rank, s.Out, 1, dy, b, 0, dyb)
	Gemm(false, false, s.T, s.In, s.Rank, s.Scale, dyb, a, 1, dx)
	db = make([]float32, s.Out*s.Rank)
	Gemm(true, false, s.Out, s.Rank, s.T, s.Scale, dy, xa, 0, db)
	da = make([]float32, s.Rank*s.In)
	Gemm(true, false, s.Rank, s.In, s.T, s.Scale, dyb, x, 0, da)
	return dx, da, db
}

// DropoutKeep reports whether element i survives dropout with probability p under seed,
// by the same integer hash as lora_dropout in lora.cu, so that CPU and GPU drop the same
// elements.
func DropoutKeep(seed uint32, i uint64, p float32) bool {
	h := mix32(uint32(i)*0x9E3779B9 ^ uint32(i>>32)*0x85EBCA6B ^ seed)
	return float32(h>>8)*(1.0/16777216.0) >= p
}

// Dropout is the reference for lora_dropout: kept elements are scaled by 1/(1−p), dropped
// ones are zero.
func Dropout(x []float32, seed uint32, p float32) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		if DropoutKeep(seed, uint64(i), p) {
			out[i] = v / (1 - p)
		}
	}
	return out
}

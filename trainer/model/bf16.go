package model

import (
	"math"

	"github.com/mass-dev/mass/trainer/safetensors"
)

// LoadOptions choose how LoadWith holds the weights.
type LoadOptions struct {
	// KeepBF16 keeps the matrices stored BF16 on disk as bf16 (Tensor.BF16, Data nil):
	// half the memory of float32 and no rounding. Vectors (norms, biases) are widened as
	// always. Only a backend that reads Tensor.BF16 (the cpu backend) may get such a model.
	KeepBF16 bool
}

// narrowExact returns the bf16 bits of v, whose values came from bf16 and so lose
// nothing.
func narrowExact(v []float32) []uint16 {
	h := make([]uint16, len(v))
	for i, x := range v {
		h[i] = uint16(math.Float32bits(x) >> 16)
	}
	return h
}

// Float32 returns the tensor's values as float32: Data, or a new copy widened from BF16.
func (t *Tensor) Float32() []float32 {
	if t.BF16 == nil {
		return t.Data
	}
	v := make([]float32, len(t.BF16))
	for i, h := range t.BF16 {
		v[i] = safetensors.BF16ToF32(h)
	}
	return v
}

// ExactBF16 returns v's bf16 bits when every value is exactly a bf16 (the low 16 bits
// are zero), else nil.
func ExactBF16(v []float32) []uint16 {
	for _, x := range v {
		if math.Float32bits(x)&0xffff != 0 {
			return nil
		}
	}
	return narrowExact(v)
}

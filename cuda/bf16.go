package cuda

import "math"

// BF16 is a bfloat16 value: the upper 16 bits of an IEEE-754 float32.
type BF16 uint16

// ToBF16 rounds f to the nearest bfloat16, ties to even, as __float2bfloat16 does.
// NaN stays NaN (quiet).
func ToBF16(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return BF16(b>>16 | 0x0040)
	}
	b += 0x7fff + (b>>16)&1
	return BF16(b >> 16)
}

// Float32 widens a bfloat16 exactly.
func (h BF16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }

// RoundBF16 returns f rounded to bfloat16 precision and widened back to float32.
func RoundBF16(f float32) float32 { return ToBF16(f).Float32() }

// EncodeBF16 converts a float32 slice to bfloat16.
func EncodeBF16(src []float32) []BF16 {
	out := make([]BF16, len(src))
	for i, v := range src {
		out[i] = ToBF16(v)
	}
	return out
}

// DecodeBF16 widens a bfloat16 slice to float32.
func DecodeBF16(src []BF16) []float32 {
	out := make([]float32, len(src))
	for i, v := range src {
		out[i] = v.Float32()
	}
	return out
}

// RoundSliceBF16 rounds every element of xs to bfloat16 precision in place and returns xs.
func RoundSliceBF16(xs []float32) []float32 {
	for i, v := range xs {
		xs[i] = RoundBF16(v)
	}
	return xs
}

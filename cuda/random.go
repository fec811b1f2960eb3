package cuda

import "math"

// mix32 is the murmur3 finalizer that the kernels' counter-based streams (dropout masks,
// normal fills) hash with.
func mix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85EBCA6B
	h ^= h >> 13
	h *= 0xC2B2AE35
	h ^= h >> 16
	return h
}

// NormalAt is the reference for fill_normal_bf16 in cast.cu: element i of a counter-based
// N(0, std²) stream under seed (hash, then Box-Muller), before rounding to bf16.
func NormalAt(seed uint32, i uint64, std float32) float32 {
	a := mix32(uint32(i)*0x9E3779B9 ^ uint32(i>>32)*0x85EBCA6B ^ seed)
	b := mix32(a ^ 0x68E31DA4)
	u1 := float64(float32(a>>8+1) * (1.0 / 16777217.0))
	u2 := float64(float32(b>>8) * (1.0 / 16777216.0))
	return float32(float64(std) * math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2))
}

package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BF16ToF32 widens a bfloat16 bit pattern exactly.
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// F32ToBF16 rounds to nearest even, keeping NaN a NaN.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// F16ToF32 widens an IEEE half exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := int32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// subnormal: value = man * 2^-24
		f := float32(man) * float32(math.Ldexp(1, -24))
		if sign != 0 {
			f = -f
		}
		return f
	case exp == 31:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	}
	return math.Float32frombits(sign | uint32(exp-15+127)<<23 | man<<13)
}

// F32ToF16 rounds to the nearest half (ties to even).
func F32ToF16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int32(u>>23)&0xff - 127 + 15
	man := u & 0x7fffff
	if u&0x7fffffff >= 0x7f800000 {
		if u&0x7fffffff > 0x7f800000 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	if exp >= 31 {
		return sign | 0x7c00
	}
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - exp)
		half := uint32(1) << (shift - 1)
		r := man >> shift
		rem := man & (1<<shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++
	}
	return sign | uint16(r)
}

// E4M3Max is the largest finite float8 e4m3fn value.
const E4M3Max = 448

// F32ToE4M3 rounds to the nearest float8 e4m3fn (ties to even, saturating
// at ±448, NaN to NaN).
func F32ToE4M3(f float32) uint8 {
	var sign uint8
	if math.Signbit(float64(f)) {
		sign = 0x80
		f = -f
	}
	if f != f {
		return sign | 0x7f
	}
	if f >= E4M3Max {
		return sign | 0x7e
	}
	x := float64(f)
	if x < 1.0/64 { // subnormal range: multiples of 2^-9
		return sign | uint8(math.RoundToEven(x*512))
	}
	fr, exp := math.Frexp(x) // x = fr·2^exp, fr in [0.5, 1)
	e := exp - 1             // x = (2fr)·2^e, 2fr in [1, 2)
	q := int(math.RoundToEven((2*fr - 1) * 8))
	if q == 8 {
		e, q = e+1, 0
	}
	c := (e+7)<<3 | q
	if c > 0x7e {
		c = 0x7e
	}
	return sign | uint8(c)
}

// f32ToE4M3Slow is the obvious reference for F32ToE4M3: try every code.
func f32ToE4M3Slow(f float32) uint8 {
	var sign uint8
	if math.Signbit(float64(f)) {
		sign = 0x80
		f = -f
	}
	if f != f {
		return sign | 0x7f
	}
	if f >= E4M3Max {
		return sign | 0x7e
	}
	best, bestErr := uint8(0), float32(math.Inf(1))
	for c := uint8(0); c < 0x7f; c++ {
		d := E4M3ToF32(c) - f
		if d < 0 {
			d = -d
		}
		if d < bestErr || (d == bestErr && c&1 == 0) {
			best, bestErr = c, d
		}
	}
	return sign | best
}

// E4M3ToF32 widens a float8 e4m3fn code.
func E4M3ToF32(c uint8) float32 {
	sign := float32(1)
	if c&0x80 != 0 {
		sign = -1
	}
	exp := int(c>>3) & 0xf
	man := float64(c & 7)
	if exp == 0xf && c&7 == 7 {
		return float32(math.NaN())
	}
	if exp == 0 {
		return sign * float32(math.Ldexp(man/8, -6))
	}
	return sign * float32(math.Ldexp(1+man/8, exp-7))
}

// DecodeFloat32 converts raw little-endian data of a float dtype to float32.
func DecodeFloat32(dt DType, b []byte) ([]float32, error) {
	size := dt.Size()
	if size == 0 || len(b)%size != 0 {
		return nil, fmt.Errorf("%w: %d bytes of %q", ErrInvalid, len(b), dt)
	}
	n := len(b) / size
	out := make([]float32, n)
	switch dt {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:])))
		}
	case BF16:
		for i := range out {
			out[i] = BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case F16:
		for i := range out {
			out[i] = F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case F8E4M3:
		for i := range out {
			out[i] = E4M3ToF32(b[i])
		}
	default:
		return nil, fmt.Errorf("dtype %s is not a float type this reader converts (want F32, F64, BF16, F16 or F8_E4M3)", dt)
	}
	return out, nil
}

// EncodeFloat32 converts float32 values to raw little-endian data of dt.
func EncodeFloat32(dt DType, v []float32) ([]byte, error) {
	out := make([]byte, len(v)*dt.Size())
	switch dt {
	case F32:
		for i, f := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
		}
	case F64:
		for i, f := range v {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(float64(f)))
		}
	case BF16:
		for i, f := range v {
			binary.LittleEndian.PutUint16(out[2*i:], F32ToBF16(f))
		}
	case F16:
		for i, f := range v {
			binary.LittleEndian.PutUint16(out[2*i:], F32ToF16(f))
		}
	case F8E4M3:
		for i, f := range v {
			out[i] = F32ToE4M3(f)
		}
	default:
		return nil, fmt.Errorf("cannot encode float32 as %s", dt)
	}
	return out, nil
}

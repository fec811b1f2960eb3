//go:build masscuda || masscudaemu

package device

import "math"

// Arg is one kernel parameter, passed in an 8-byte slot: a device pointer, a 64-bit integer
// or a float32 in the low four bytes.
type Arg uint64

// Ptr passes a device pointer.
func Ptr(p uintptr) Arg { return Arg(p) }

// Int passes a long long.
func Int(v int) Arg { return Arg(uint64(int64(v))) }

// F32 passes a float.
func F32(v float32) Arg { return Arg(math.Float32bits(v)) }

// Dim is a grid or block shape.
type Dim struct{ X, Y, Z int }

// D1 is a one-dimensional shape.
func D1(x int) Dim { return Dim{x, 1, 1} }

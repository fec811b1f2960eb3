//go:build masscudaemu

// Package emu runs the unchanged kernel sources of package cuda on the CPU (one fiber
// per CUDA thread, blocks in sequence, emulated barriers and warp shuffles), so that their
// indexing and arithmetic can be checked against the Go references on a host without a
// GPU. It says nothing about the GPU's memory model or speed. Build with -tags masscudaemu.
package emu

//go:generate go run gen.go

// Regenerate the kernel copy with: go generate -tags masscudaemu ./cuda/emu

// #cgo CXXFLAGS: -std=c++20 -O2 -DMASS_EMU -Wno-unused-function
// #cgo LDFLAGS: -lstdc++ -lpthread -lm
// #include <stdint.h>
// #include <stdlib.h>
// int emu_launch(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
//                unsigned bz, unsigned long smem, const uint64_t* args);
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/mass-dev/mass/cuda"
)

// Mem is host memory from C.malloc that the emulated kernels address by pointer value.
type Mem struct {
	p     unsafe.Pointer
	Bytes int
}

// Alloc returns n bytes filled with 0xFF (NaN as bf16 and as fp32), so that an element a
// kernel fails to write cannot pass a check.
func Alloc(n int) Mem {
	p := C.malloc(C.size_t(max(n, 1)))
	b := unsafe.Slice((*byte)(p), max(n, 1))
	for i := range b {
		b[i] = 0xff
	}
	return Mem{p: p, Bytes: n}
}

// Free releases m.
func (m Mem) Free() { C.free(m.p) }

func (m Mem) bytes() []byte { return unsafe.Slice((*byte)(m.p), m.Bytes) }

// BF16 allocates and fills a bf16 buffer from f (rounded).
func BF16(f []float32) Mem {
	m := Alloc(2 * len(f))
	b := m.bytes()
	for i, v := range f {
		h := cuda.ToBF16(v)
		b[2*i], b[2*i+1] = byte(h), byte(h>>8)
	}
	return m
}

// F32 allocates and fills an fp32 buffer.
func F32(f []float32) Mem {
	m := Alloc(4 * len(f))
	b := m.bytes()
	for i, v := range f {
		u := math.Float32bits(v)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return m
}

// I32 allocates and fills an int32 buffer.
func I32(v []int32) Mem {
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = math.Float32frombits(uint32(x))
	}
	return F32(f)
}

// GetBF16 reads n bf16 values widened to float32.
func (m Mem) GetBF16(n int) []float32 {
	b := m.bytes()
	out := make([]float32, n)
	for i := range out {
		out[i] = cuda.BF16(uint16(b[2*i]) | uint16(b[2*i+1])<<8).Float32()
	}
	return out
}

// GetF32 reads n fp32 values.
func (m Mem) GetF32(n int) []float32 {
	b := m.bytes()
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}

// Arg helpers: every parameter is one 8-byte slot, as on the device.
func P(m Mem) uint64     { return uint64(uintptr(m.p)) }
func I(v int) uint64     { return uint64(int64(v)) }
func F(v float32) uint64 { return uint64(math.Float32bits(v)) }

// Launch runs kernel name over grid × block (block.Y = block.Z = 1, block.X a multiple of
// 32) with smem bytes of dynamic shared memory.
func Launch(name string, grid [3]int, blockX, smem int, args ...uint64) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	cargs := (*C.uint64_t)(C.malloc(C.size_t(8 * max(len(args), 1))))
	defer C.free(unsafe.Pointer(cargs))
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(cargs)), len(args)), args)
	switch C.emu_launch(cname, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]), C.uint(blockX), 1, 1, C.ulong(smem), cargs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("emulate %s: no such kernel", name)
	case 3:
		return fmt.Errorf("emulate %s: deadlock (a barrier that not every live thread reaches)", name)
	case 4:
		return fmt.Errorf("emulate %s: misaligned vector access (a 32- or 128-bit load or store off its alignment, which faults on the device)", name)
	default:
		return fmt.Errorf("emulate %s: block %d unsupported (a multiple of 32 up to 1024)", name, blockX)
	}
}

// Malloc returns n bytes of C memory filled with 0xFF, addressed by value (for the
// emulated device's allocator).
func Malloc(n int) uintptr { return uintptr(Alloc(n).p) }

// FreePtr releases memory from Malloc.
func FreePtr(p uintptr) { C.free(*(*unsafe.Pointer)(unsafe.Pointer(&p))) }

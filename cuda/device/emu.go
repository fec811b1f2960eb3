//go:build masscudaemu && !masscuda

package device

import (
	"fmt"
	"unsafe"

	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/emu"
)

// Exec is the emulated device (build tag masscudaemu): host memory, kernels run by
// package emu on CPU threads, everything synchronous. Same API as the CUDA Exec.
type Exec struct {
	Info     Info
	mem      *devmem.Cache
	syncEach bool
}

func newExec(ordinal int) (*Exec, error) {
	if ordinal != 0 {
		return nil, fmt.Errorf("emulated device has only ordinal 0, not %d", ordinal)
	}
	return &Exec{Info: Info{Name: "CPU emulator", Major: 9, SMs: 1, TotalMem: 1 << 34}, mem: devmem.New(hostRaw{})}, nil
}

type hostRaw struct{}

var _ devmem.Raw = hostRaw{}

func (hostRaw) Malloc(n int64) (uintptr, error) { return emu.Malloc(int(n)), nil }
func (hostRaw) Free(p uintptr) error            { emu.FreePtr(p); return nil }

func hostBytes(p uintptr, n int64) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// Launch runs the kernel on the emulator.
func (x *Exec) Launch(name string, grid, block Dim, smem int, args ...Arg) error {
	if grid.X <= 0 || grid.Y <= 0 || grid.Z <= 0 {
		return fmt.Errorf("launch %s: empty grid %+v", name, grid)
	}
	a := make([]uint64, len(args))
	for i, v := range args {
		a[i] = uint64(v)
	}
	if err := emu.Launch(name, [3]int{grid.X, grid.Y, grid.Z}, block.X, smem, a...); err != nil {
		return fmt.Errorf("launch %s grid %+v block %+v: %w", name, grid, block, err)
	}
	return nil
}

// SetMaxDynamicSmem is a no-op on the emulator.
func (x *Exec) SetMaxDynamicSmem(string, int) error { return nil }

// Sync is a no-op: emulated work is synchronous.
func (x *Exec) Sync() error { return nil }

// Stream returns 0 (no streams on the emulator).
func (x *Exec) Stream() uintptr { return 0 }

// Alloc returns a cached host block.
func (x *Exec) Alloc(bytes int64) (devmem.Block, error) { return x.mem.Alloc(bytes) }

// Free returns b to the cache.
func (x *Exec) Free(b devmem.Block) { x.mem.Free(b) }

// CopyIn copies host bytes into an emulated device block.
func (x *Exec) CopyIn(dst uintptr, src unsafe.Pointer, bytes int64) error {
	if bytes > 0 {
		copy(hostBytes(dst, bytes), unsafe.Slice((*byte)(src), bytes))
	}
	return nil
}

// CopyOut copies an emulated device block to host memory.
func (x *Exec) CopyOut(dst unsafe.Pointer, src uintptr, bytes int64) error {
	if bytes > 0 {
		copy(unsafe.Slice((*byte)(dst), bytes), hostBytes(src, bytes))
	}
	return nil
}

// Copy copies between emulated device blocks.
func (x *Exec) Copy(dst, src uintptr, bytes int64) error {
	copy(hostBytes(dst, bytes), hostBytes(src, bytes))
	return nil
}

// Memset8 fills bytes at p with v.
func (x *Exec) Memset8(p uintptr, v byte, bytes int64) error {
	b := hostBytes(p, bytes)
	for i := range b {
		b[i] = v
	}
	return nil
}

func (x *Exec) close() error { return x.mem.Trim() }

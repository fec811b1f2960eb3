//go:build masscuda || masscudaemu

package device

import (
	"fmt"
	"unsafe"

	"github.com/mass-dev/mass/cuda/devmem"
)

// Exec is the device as seen from its owner thread. Its methods must only be called inside
// Device.Do; every return code is checked and wrapped.
//
// Ordering contract. Every piece of device work is issued on ONE compute stream, in program
// order: kernel launches, library calls (cuBLASLt gets Stream()), device-to-device copies,
// memsets and both directions of host copies. The stream is created non-blocking, so it is
// NOT ordered against the legacy NULL stream: nothing may be issued there (a synchronous
// cuMemcpyHtoD from pageable memory is a NULL-stream copy that returns once the source is
// staged, while its DMA may still be writing when a kernel on the compute stream reads the
// destination — the bug this contract replaces). Hence:
//   - CopyIn is cuMemcpyHtoDAsync on the compute stream. It returns once the driver has
//     staged src (the caller may reuse src at once); the device write is ordered before
//     every later launch, copy or library call.
//   - CopyOut is cuMemcpyDtoHAsync on the compute stream followed by a stream synchronize:
//     it waits for the work before it and dst holds the bytes on return.
//   - Free hands a block back to the cache at once: its next user issues work on the same
//     stream, which runs after every earlier use.
//
// Pinned staging does not pay here: weights cross once at start-up and, with the device
// optimizer, only a loss and a norm cross per step. The emulated driver (tag masscudaemu)
// models the streams: it defers what the CUDA driver may leave in flight and rejects a
// kernel that reads memory whose copy is not ordered before it.
type Exec struct {
	Info     Info
	drv      driver
	compute  stream
	mem      *devmem.Cache
	syncEach bool
}

// stream is a driver's stream handle.
type stream uintptr

// driver is the thin layer under Exec: the CUDA driver API (masscuda) or the emulator's
// model of it (masscudaemu). Each method issues exactly one operation on stream s.
type driver interface {
	launch(name string, grid, block Dim, smem int, args []Arg, s stream) error
	setMaxDynamicSmem(name string, bytes int) error
	htod(dst uintptr, src unsafe.Pointer, bytes int64, s stream) error
	dtoh(dst unsafe.Pointer, src uintptr, bytes int64, s stream) error
	dtod(dst, src uintptr, bytes int64, s stream) error
	memset8(p uintptr, v byte, bytes int64, s stream) error
	// peer copies bytes from this device's src to dst on the device of dstDrv.
	peer(dst uintptr, dstDrv driver, src uintptr, bytes int64, s stream) error
	sync(s stream) error
	// library declares work an external library issues on s that reads or writes ptrs.
	library(s stream, ptrs []uintptr) error
	raw() devmem.Raw
	close(s stream) error
}

func newExecOn(drv driver, info Info, s stream) *Exec {
	return &Exec{Info: info, drv: drv, compute: s, mem: devmem.New(drv.raw())}
}

// Launch runs kernel name on the compute stream and checks the launch (and, with
// MASS_CUDA_SYNC=1, its completion).
func (x *Exec) Launch(name string, grid, block Dim, smem int, args ...Arg) error {
	if grid.X <= 0 || grid.Y <= 0 || grid.Z <= 0 {
		return fmt.Errorf("launch %s: empty grid %+v", name, grid)
	}
	if err := x.drv.launch(name, grid, block, smem, args, x.compute); err != nil {
		return fmt.Errorf("launch %s grid %+v block %+v: %w", name, grid, block, err)
	}
	if x.syncEach {
		if err := x.drv.sync(x.compute); err != nil {
			return fmt.Errorf("kernel %s: %w", name, err)
		}
	}
	return nil
}

// SetMaxDynamicSmem allows kernel name to use up to bytes of dynamic shared memory.
func (x *Exec) SetMaxDynamicSmem(name string, bytes int) error {
	return x.drv.setMaxDynamicSmem(name, bytes)
}

// Sync waits for the compute stream to drain.
func (x *Exec) Sync() error {
	if err := x.drv.sync(x.compute); err != nil {
		return fmt.Errorf("synchronize stream: %w", err)
	}
	return nil
}

// Stream returns the compute stream's handle for libraries such as cuBLASLt.
func (x *Exec) Stream() uintptr { return uintptr(x.compute) }

// Library declares a library call about to be issued on Stream() that touches ptrs. The
// CUDA build does nothing; the emulator orders pending copies and checks them.
func (x *Exec) Library(ptrs ...uintptr) error { return x.drv.library(x.compute, ptrs) }

// Alloc returns a cached device block of at least bytes.
func (x *Exec) Alloc(bytes int64) (devmem.Block, error) { return x.mem.Alloc(bytes) }

// Free returns b to the cache at once (see the ordering contract).
func (x *Exec) Free(b devmem.Block) { x.mem.Free(b) }

// CopyIn copies host bytes src to device pointer dst on the compute stream.
func (x *Exec) CopyIn(dst uintptr, src unsafe.Pointer, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	if err := x.drv.htod(dst, src, bytes, x.compute); err != nil {
		return fmt.Errorf("copy %d bytes to device: %w", bytes, err)
	}
	return nil
}

// CopyOut copies bytes from device pointer src to host memory dst on the compute stream
// and waits for it.
func (x *Exec) CopyOut(dst unsafe.Pointer, src uintptr, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	if err := x.drv.dtoh(dst, src, bytes, x.compute); err != nil {
		return fmt.Errorf("copy %d bytes from device: %w", bytes, err)
	}
	return x.Sync()
}

// Copy copies bytes between device pointers on the compute stream.
func (x *Exec) Copy(dst, src uintptr, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	if err := x.drv.dtod(dst, src, bytes, x.compute); err != nil {
		return fmt.Errorf("copy %d bytes on device: %w", bytes, err)
	}
	return nil
}

// Memset8 sets bytes at p to v on the compute stream (used to poison outputs before checks).
func (x *Exec) Memset8(p uintptr, v byte, bytes int64) error {
	if err := x.drv.memset8(p, v, bytes, x.compute); err != nil {
		return fmt.Errorf("memset %d bytes: %w", bytes, err)
	}
	return nil
}

func (x *Exec) close() error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(x.Sync())
	keep(x.mem.Trim())
	keep(x.drv.close(x.compute))
	return first
}

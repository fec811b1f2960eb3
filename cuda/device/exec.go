//go:build masscuda

package device

import (
	"bytes"
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/devmem"
)

// Exec is the device as seen from its owner thread. Its methods must only be called inside
// Device.Do; every CUDA return code is checked and wrapped.
type Exec struct {
	Info     Info
	dev      cu.Device
	ctx      cu.CUContext
	stream   cu.Stream
	mods     []cu.Module
	fns      map[string]cu.Function
	mem      *devmem.Cache
	syncEach bool
}

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

func (x *Exec) loadModule(name string) error {
	ptx, err := cuda.PTX(name, x.Info.Major, x.Info.Minor)
	if err != nil {
		return err
	}
	mod, err := cu.LoadData(string(append(ptx, 0)))
	if err != nil {
		return fmt.Errorf("load kernel module %s (driver JIT of PTX): %w", name, err)
	}
	x.mods = append(x.mods, mod)
	for _, line := range bytes.Split(ptx, []byte("\n")) {
		_, rest, ok := bytes.Cut(line, []byte(".entry "))
		if !ok {
			continue
		}
		fname, _, _ := bytes.Cut(rest, []byte("("))
		fn, err := mod.Function(string(fname))
		if err != nil {
			return fmt.Errorf("kernel %s in module %s: %w", fname, name, err)
		}
		x.fns[string(fname)] = fn
	}
	return nil
}

// Launch runs kernel name on the stream and checks the launch (and, with MASS_CUDA_SYNC=1,
// its completion).
func (x *Exec) Launch(name string, grid, block Dim, smem int, args ...Arg) error {
	fn, ok := x.fns[name]
	if !ok {
		return fmt.Errorf("launch %s: no such kernel in the embedded modules", name)
	}
	if grid.X <= 0 || grid.Y <= 0 || grid.Z <= 0 {
		return fmt.Errorf("launch %s: empty grid %+v", name, grid)
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	if err := fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, smem, x.stream, params); err != nil {
		return fmt.Errorf("launch %s grid %+v block %+v: %w", name, grid, block, err)
	}
	if x.syncEach {
		if err := x.stream.Synchronize(); err != nil {
			return fmt.Errorf("kernel %s: %w", name, err)
		}
	}
	return nil
}

// SetMaxDynamicSmem allows kernel name to use up to bytes of dynamic shared memory.
func (x *Exec) SetMaxDynamicSmem(name string, bytes int) error {
	fn, ok := x.fns[name]
	if !ok {
		return fmt.Errorf("kernel %s: not loaded", name)
	}
	return setMaxDynamicSmem(fn, bytes)
}

// Sync waits for the stream to drain.
func (x *Exec) Sync() error {
	if err := x.stream.Synchronize(); err != nil {
		return fmt.Errorf("synchronize stream: %w", err)
	}
	return nil
}

// Stream returns the stream handle for libraries such as cuBLASLt.
func (x *Exec) Stream() uintptr { return *(*uintptr)(unsafe.Pointer(&x.stream)) }

// Alloc returns a cached device block of at least bytes.
func (x *Exec) Alloc(bytes int64) (devmem.Block, error) { return x.mem.Alloc(bytes) }

// Free returns b to the cache at once. All work runs on the one stream, so a later kernel
// that reuses the block is ordered after the kernels that used it, and CopyIn synchronizes
// before writing from the host.
func (x *Exec) Free(b devmem.Block) { x.mem.Free(b) }

// MemStats reports the allocator's counters.
func (x *Exec) MemStats() devmem.Stats { return x.mem.Stats() }

// CopyIn copies host bytes src to device pointer dst (synchronously).
func (x *Exec) CopyIn(dst uintptr, src unsafe.Pointer, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	if err := x.Sync(); err != nil {
		return err
	}
	if err := cu.MemcpyHtoD(cu.DevicePtr(dst), src, bytes); err != nil {
		return fmt.Errorf("copy %d bytes to device: %w", bytes, err)
	}
	return nil
}

// CopyOut copies bytes from device pointer src to host memory dst after draining the stream.
func (x *Exec) CopyOut(dst unsafe.Pointer, src uintptr, bytes int64) error {
	if bytes == 0 {
		return nil
	}
	if err := x.Sync(); err != nil {
		return err
	}
	if err := cu.MemcpyDtoH(dst, cu.DevicePtr(src), bytes); err != nil {
		return fmt.Errorf("copy %d bytes from device: %w", bytes, err)
	}
	return nil
}

// Copy copies bytes between device pointers on the stream.
func (x *Exec) Copy(dst, src uintptr, bytes int64) error {
	if err := cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), bytes, x.stream); err != nil {
		return fmt.Errorf("copy %d bytes on device: %w", bytes, err)
	}
	return nil
}

// Memset8 sets bytes at p to v on the stream (used to poison outputs before checks).
func (x *Exec) Memset8(p uintptr, v byte, bytes int64) error {
	if err := cu.MemsetD8Async(cu.DevicePtr(p), v, bytes, x.stream); err != nil {
		return fmt.Errorf("memset %d bytes: %w", bytes, err)
	}
	return nil
}

// Timer records events around a region on the stream; Stop returns milliseconds.
type Timer struct {
	x          *Exec
	start, end cu.Event
}

// StartTimer records a start event.
func (x *Exec) StartTimer() (*Timer, error) {
	s, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return nil, fmt.Errorf("create event: %w", err)
	}
	e, err := cu.MakeEvent(cu.DefaultEvent)
	if err != nil {
		return nil, fmt.Errorf("create event: %w", err)
	}
	if err := s.Record(x.stream); err != nil {
		return nil, fmt.Errorf("record event: %w", err)
	}
	return &Timer{x: x, start: s, end: e}, nil
}

// Stop records the end event, waits for it and returns the elapsed milliseconds.
func (t *Timer) Stop() (float64, error) {
	defer cu.DestroyEvent(&t.start)
	defer cu.DestroyEvent(&t.end)
	if err := t.end.Record(t.x.stream); err != nil {
		return 0, fmt.Errorf("record event: %w", err)
	}
	if err := t.end.Synchronize(); err != nil {
		return 0, fmt.Errorf("wait for event: %w", err)
	}
	ms, err := t.start.Elapsed(t.end)
	if err != nil {
		return 0, fmt.Errorf("elapsed time: %w", err)
	}
	return ms, nil
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
	for _, m := range x.mods {
		keep(m.Unload())
	}
	keep(x.stream.Destroy())
	keep(x.dev.ReleasePrimaryCtx())
	return first
}

//go:build masscuda

package device

import (
	"bytes"
	"errors"
	"fmt"
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

func newExec(ordinal int) (*Exec, error) {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return nil, fmt.Errorf("get cuda device %d: %w", ordinal, err)
	}
	ctx, err := dev.RetainPrimaryCtx()
	if err != nil {
		return nil, fmt.Errorf("retain primary context of device %d: %w", ordinal, err)
	}
	if err := cu.SetCurrentContext(ctx); err != nil {
		return nil, fmt.Errorf("make context current: %w", err)
	}
	x := &Exec{dev: dev, ctx: ctx, fns: map[string]cu.Function{}}
	x.Info.Ordinal = ordinal
	if x.Info.Major, x.Info.Minor, err = dev.ComputeCapability(); err != nil {
		return nil, fmt.Errorf("read compute capability: %w", err)
	}
	if x.Info.Name, err = dev.Name(); err != nil {
		return nil, fmt.Errorf("read device name: %w", err)
	}
	if x.Info.SMs, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return nil, fmt.Errorf("read multiprocessor count: %w", err)
	}
	if _, x.Info.TotalMem, err = cu.MemInfo(); err != nil {
		return nil, fmt.Errorf("read memory info: %w", err)
	}
	if x.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return nil, fmt.Errorf("create stream: %w", err)
	}
	x.mem = devmem.New(rawAlloc{})
	for _, name := range cuda.Modules() {
		if err := x.loadModule(name); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// rawAlloc is devmem's view of cuMemAlloc/cuMemFree on the current context.
type rawAlloc struct{}

var _ devmem.Raw = rawAlloc{}

func (rawAlloc) Malloc(n int64) (uintptr, error) {
	p, err := cu.MemAlloc(n)
	if err != nil {
		if errors.Is(err, cu.OutOfMemory) {
			return 0, fmt.Errorf("cuMemAlloc %d: %w: %w", n, err, devmem.ErrOutOfMemory)
		}
		return 0, fmt.Errorf("cuMemAlloc %d: %w", n, err)
	}
	return uintptr(p), nil
}

func (rawAlloc) Free(p uintptr) error {
	if err := cu.MemFree(cu.DevicePtr(p)); err != nil {
		return fmt.Errorf("cuMemFree: %w", err)
	}
	return nil
}

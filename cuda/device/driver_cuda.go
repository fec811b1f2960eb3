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
	"github.com/mass-dev/mass/errclass"
)

// cudaDriver is the CUDA driver API on the current context (gorgonia.org/cu).
type cudaDriver struct {
	dev  cu.Device
	ctx  cu.CUContext
	mods []cu.Module
	fns  map[string]cu.Function
}

func (d *cudaDriver) loadModule(name string, major, minor int) error {
	ptx, err := cuda.PTX(name, major, minor)
	if err != nil {
		return err
	}
	mod, err := cu.LoadData(string(append(ptx, 0)))
	if err != nil {
		return fmt.Errorf("load kernel module %s (driver JIT of PTX): %w", name, err)
	}
	d.mods = append(d.mods, mod)
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
		d.fns[string(fname)] = fn
	}
	return nil
}

func cuStream(s stream) cu.Stream { return *(*cu.Stream)(unsafe.Pointer(&s)) }

func (d *cudaDriver) launch(name string, grid, block Dim, smem int, args []Arg, s stream) error {
	fn, ok := d.fns[name]
	if !ok {
		return errors.New("no such kernel in the embedded modules")
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	return fn.Launch(grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, smem, cuStream(s), params)
}

func (d *cudaDriver) setMaxDynamicSmem(name string, bytes int) error {
	fn, ok := d.fns[name]
	if !ok {
		return fmt.Errorf("kernel %s: not loaded", name)
	}
	return setMaxDynamicSmem(fn, bytes)
}

func (d *cudaDriver) htod(dst uintptr, src unsafe.Pointer, n int64, s stream) error {
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, n, cuStream(s))
}

func (d *cudaDriver) dtoh(dst unsafe.Pointer, src uintptr, n int64, s stream) error {
	return cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), n, cuStream(s))
}

func (d *cudaDriver) dtod(dst, src uintptr, n int64, s stream) error {
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), n, cuStream(s))
}

func (d *cudaDriver) peer(dst uintptr, dstDrv driver, src uintptr, n int64, s stream) error {
	dd, ok := dstDrv.(*cudaDriver)
	if !ok {
		return errors.New("peer copy to a device of another driver")
	}
	return cu.MemcpyPeerAsync(cu.DevicePtr(dst), dd.ctx, cu.DevicePtr(src), d.ctx, n, cuStream(s))
}

func (d *cudaDriver) memset8(p uintptr, v byte, n int64, s stream) error {
	return cu.MemsetD8Async(cu.DevicePtr(p), v, n, cuStream(s))
}

func (d *cudaDriver) sync(s stream) error {
	st := cuStream(s)
	return st.Synchronize()
}

func (d *cudaDriver) library(stream, []uintptr) error { return nil }

func (d *cudaDriver) raw() devmem.Raw { return rawAlloc{} }

func (d *cudaDriver) close(s stream) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, m := range d.mods {
		keep(m.Unload())
	}
	st := cuStream(s)
	keep(st.Destroy())
	keep(d.dev.ReleasePrimaryCtx())
	return first
}

func newExec(ordinal int) (*Exec, error) {
	dev, err := cu.GetDevice(ordinal)
	if errors.Is(err, cu.InvalidDevice) || errors.Is(err, cu.NoDevice) {
		return nil, errclass.Mark(fmt.Errorf("get cuda device %d: %w", ordinal, err), ErrNoDevice)
	}
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
	d := &cudaDriver{dev: dev, ctx: ctx, fns: map[string]cu.Function{}}
	info := Info{Ordinal: ordinal}
	if info.Major, info.Minor, err = dev.ComputeCapability(); err != nil {
		return nil, fmt.Errorf("read compute capability: %w", err)
	}
	if info.Name, err = dev.Name(); err != nil {
		return nil, fmt.Errorf("read device name: %w", err)
	}
	if info.SMs, err = dev.Attribute(cu.MultiprocessorCount); err != nil {
		return nil, fmt.Errorf("read multiprocessor count: %w", err)
	}
	if _, info.TotalMem, err = cu.MemInfo(); err != nil {
		return nil, fmt.Errorf("read memory info: %w", err)
	}
	// Non-blocking: the stream never waits on the legacy NULL stream, which is why no work
	// may be issued there (see Exec).
	st, err := cu.MakeStream(cu.NonBlocking)
	if err != nil {
		return nil, fmt.Errorf("create stream: %w", err)
	}
	for _, name := range cuda.Modules() {
		if err := d.loadModule(name, info.Major, info.Minor); err != nil {
			return nil, err
		}
	}
	return newExecOn(d, info, *(*stream)(unsafe.Pointer(&st))), nil
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

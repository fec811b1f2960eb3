//go:build masscuda

package device

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"

	"gorgonia.org/cu"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/devmem"
)

// Device owns a CUDA context on one locked OS thread. Every CUDA call runs on that thread
// through Do; Do is safe for concurrent use and runs the functions one at a time.
type Device struct {
	work chan func()
	quit chan struct{}
	x    *Exec
	log  *slog.Logger
}

// Info describes the opened device.
type Info struct {
	Ordinal, Major, Minor int
	Name                  string
	SMs                   int
	TotalMem              int64
}

// Open starts the owner thread, makes the device's primary context current on it, creates
// a stream and loads every embedded kernel module. With MASS_CUDA_SYNC=1 every launch is
// followed by a synchronize, so that a faulting kernel is named by its launch.
func Open(ordinal int, log *slog.Logger) (*Device, error) {
	if log == nil {
		log = slog.Default()
	}
	d := &Device{work: make(chan func()), quit: make(chan struct{}), log: log.With("component", "cuda")}
	errc := make(chan error, 1)
	go d.loop(ordinal, errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	d.log.Info("cuda device open", "name", d.x.Info.Name, "cc", fmt.Sprintf("%d.%d", d.x.Info.Major, d.x.Info.Minor),
		"sms", d.x.Info.SMs, "mem_gib", d.x.Info.TotalMem>>30)
	return d, nil
}

func (d *Device) loop(ordinal int, errc chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x, err := newExec(ordinal)
	errc <- err
	if err != nil {
		return
	}
	x.syncEach = os.Getenv("MASS_CUDA_SYNC") == "1"
	d.x = x
	for {
		select {
		case fn := <-d.work:
			fn()
		case <-d.quit:
			return
		}
	}
}

// Info returns what Open found about the device.
func (d *Device) Info() Info { return d.x.Info }

// Do runs fn on the owner thread with the device's Exec and returns its error.
func (d *Device) Do(fn func(x *Exec) error) error {
	done := make(chan error, 1)
	select {
	case d.work <- func() { done <- fn(d.x) }:
	case <-d.quit:
		return errors.New("cuda device closed")
	}
	return <-done
}

// Close synchronizes, frees the cached memory, unloads the modules and stops the thread.
func (d *Device) Close() error {
	err := d.Do(func(x *Exec) error { return x.close() })
	close(d.quit)
	return err
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

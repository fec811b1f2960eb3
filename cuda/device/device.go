//go:build masscuda || masscudaemu

package device

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"

	"github.com/mass-dev/mass/errclass"
)

// Error classes of the device layer, so that errors.Is works in the trainer
// and past it: a missing ordinal is ErrNotFound, a closed device ErrClosed.
var (
	ErrNoDevice = errclass.New("no such cuda device", errclass.ErrNotFound)
	ErrClosed   = errclass.New("cuda device closed", errclass.ErrClosed)
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
	if err != nil {
		errc <- err
		return
	}
	x.syncEach = os.Getenv("MASS_CUDA_SYNC") == "1"
	// d.x is set before Open is told, so Open never reads it half-made.
	d.x = x
	errc <- nil
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
		return ErrClosed
	}
	return <-done
}

// Close synchronizes, frees the cached memory, unloads the modules and stops the thread.
func (d *Device) Close() error {
	err := d.Do(func(x *Exec) error { return x.close() })
	close(d.quit)
	return err
}

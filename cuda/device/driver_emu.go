//go:build masscudaemu && !masscuda

package device

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"github.com/mass-dev/mass/cuda/devmem"
	"github.com/mass-dev/mass/cuda/emu"
	"github.com/mass-dev/mass/errclass"
)

// Emulated stream handles: the legacy NULL stream and the compute stream (non-blocking,
// like the CUDA one).
const (
	nullStream    stream = 0
	computeStream stream = 1
)

// emuDriver is the emulated device (build tag masscudaemu): host memory, kernels run by
// package emu on CPU threads, in issue order. It models the streams as far as the ordering
// contract needs: work on one stream runs in issue order; a host copy whose completion the
// CUDA driver may leave in flight is deferred until something orders it — a device-to-host
// copy until its stream is synchronized (or later work on that stream), a copy on the
// legacy NULL stream until the NULL stream is synchronized (the compute stream is
// non-blocking, so its work does not order it). A kernel or library call that touches an
// allocation with a write still in flight from another stream is an error, and so is
// reading the host buffer of an unfinished copy (the bytes are simply not there yet).
type emuDriver struct {
	pending []pendingCopy
	allocs  map[uintptr]int64
}

// pendingCopy is a write not yet performed: bytes to land at dst when s orders it.
type pendingCopy struct {
	s    stream
	dst  unsafe.Pointer
	data []byte
	dev  uintptr // device-side address of the copy (dst for uploads, src for downloads)
	up   bool    // host to device
}

// EmuDevices is how many emulated devices there are (ordinals 0 to EmuDevices−1), so that
// the pipeline split and the data-parallel replicas can be checked without GPUs.
const EmuDevices = 8

// emuMu runs one emulated kernel at a time: the emulator's fibers are not meant to run
// from several devices' threads at once.
var emuMu sync.Mutex

func newExec(ordinal int) (*Exec, error) {
	if ordinal < 0 || ordinal >= EmuDevices {
		return nil, errclass.Mark(fmt.Errorf("emulated devices have ordinals 0 to %d, not %d", EmuDevices-1, ordinal), ErrNoDevice)
	}
	d := &emuDriver{allocs: map[uintptr]int64{}}
	return newExecOn(d, Info{Ordinal: ordinal, Name: "CPU emulator", Major: 9, SMs: 1, TotalMem: 1 << 34}, computeStream), nil
}

func hostPtr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func hostBytes(p uintptr, n int64) []byte { return unsafe.Slice((*byte)(hostPtr(p)), n) }

// flush performs the deferred copies that stream s orders: its own, and for the legacy
// NULL stream everything (it synchronizes with every blocking stream; there are none).
func (d *emuDriver) flush(s stream) {
	keep := d.pending[:0]
	for _, c := range d.pending {
		if c.s == s || s == nullStream {
			copy(unsafe.Slice((*byte)(c.dst), len(c.data)), c.data)
			continue
		}
		keep = append(keep, c)
	}
	d.pending = keep
}

// order is called before work on s that touches ptrs: it performs the copies s orders and
// fails if a copy from another stream still writes into an allocation that ptrs point into.
func (d *emuDriver) order(what string, s stream, ptrs []uintptr) error {
	d.flush(s)
	for _, c := range d.pending {
		if !c.up {
			continue
		}
		base, size := d.allocOf(c.dev)
		for _, p := range ptrs {
			if p >= base && p < base+uintptr(size) {
				return fmt.Errorf("%s on stream %d reads device memory %#x whose upload on stream %d is not ordered before it",
					what, s, p, c.s)
			}
		}
	}
	return nil
}

// allocOf returns the allocation holding p (p itself, 1 byte, when none does).
func (d *emuDriver) allocOf(p uintptr) (uintptr, int64) {
	bases := make([]uintptr, 0, len(d.allocs))
	for b := range d.allocs {
		bases = append(bases, b)
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	i := sort.Search(len(bases), func(i int) bool { return bases[i] > p }) - 1
	if i >= 0 && p < bases[i]+uintptr(d.allocs[bases[i]]) {
		return bases[i], d.allocs[bases[i]]
	}
	return p, 1
}

func (d *emuDriver) launch(name string, grid, block Dim, smem int, args []Arg, s stream) error {
	a := make([]uint64, len(args))
	ptrs := make([]uintptr, len(args))
	for i, v := range args {
		a[i], ptrs[i] = uint64(v), uintptr(v)
	}
	if err := d.order("kernel "+name, s, ptrs); err != nil {
		return err
	}
	emuMu.Lock()
	defer emuMu.Unlock()
	return emu.Launch(name, [3]int{grid.X, grid.Y, grid.Z}, block.X, smem, a...)
}

func (d *emuDriver) setMaxDynamicSmem(string, int) error { return nil }

// htod stages src at once (as the driver does for pageable memory) and defers the write to
// the device until s orders it.
func (d *emuDriver) htod(dst uintptr, src unsafe.Pointer, n int64, s stream) error {
	if err := d.order("upload", s, nil); err != nil {
		return err
	}
	data := append([]byte(nil), unsafe.Slice((*byte)(src), n)...)
	d.pending = append(d.pending, pendingCopy{s: s, dst: hostPtr(dst), data: data, dev: dst, up: true})
	return nil
}

// dtoh reads the device bytes in stream order and defers the host write until s is
// synchronized.
func (d *emuDriver) dtoh(dst unsafe.Pointer, src uintptr, n int64, s stream) error {
	if err := d.order("download", s, []uintptr{src}); err != nil {
		return err
	}
	data := append([]byte(nil), hostBytes(src, n)...)
	d.pending = append(d.pending, pendingCopy{s: s, dst: dst, data: data, dev: src})
	return nil
}

func (d *emuDriver) dtod(dst, src uintptr, n int64, s stream) error {
	if err := d.order("device copy", s, []uintptr{dst, src}); err != nil {
		return err
	}
	copy(hostBytes(dst, n), hostBytes(src, n))
	return nil
}

// peer copies between two emulated devices' host memory once src's stream has ordered
// every earlier write (the destination has none in flight: CopyPeer synchronized it).
func (d *emuDriver) peer(dst uintptr, dstDrv driver, src uintptr, n int64, s stream) error {
	dd, ok := dstDrv.(*emuDriver)
	if !ok || dd == d {
		return fmt.Errorf("emulated peer copy needs two emulated devices")
	}
	if err := d.order("peer copy", s, []uintptr{src}); err != nil {
		return err
	}
	if base, size := dd.allocOf(dst); base+uintptr(size) < dst+uintptr(n) {
		return fmt.Errorf("peer copy of %d bytes overruns the destination allocation", n)
	}
	copy(hostBytes(dst, n), hostBytes(src, n))
	return nil
}

func (d *emuDriver) memset8(p uintptr, v byte, n int64, s stream) error {
	if err := d.order("memset", s, []uintptr{p}); err != nil {
		return err
	}
	b := hostBytes(p, n)
	for i := range b {
		b[i] = v
	}
	return nil
}

func (d *emuDriver) sync(s stream) error { d.flush(s); return nil }

func (d *emuDriver) library(s stream, ptrs []uintptr) error { return d.order("library call", s, ptrs) }

func (d *emuDriver) raw() devmem.Raw { return hostRaw{d} }

func (d *emuDriver) close(stream) error { d.flush(nullStream); return nil }

type hostRaw struct{ d *emuDriver }

var _ devmem.Raw = hostRaw{}

func (h hostRaw) Malloc(n int64) (uintptr, error) {
	p := emu.Malloc(int(n))
	h.d.allocs[p] = n
	return p, nil
}

func (h hostRaw) Free(p uintptr) error {
	delete(h.d.allocs, p)
	emu.FreePtr(p)
	return nil
}

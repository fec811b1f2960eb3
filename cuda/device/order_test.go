//go:build masscudaemu && !masscuda

package device

import (
	"math"
	"strings"
	"testing"
	"unsafe"
)

// castRun uploads x, runs cast_f32_bf16 over it on the compute stream and downloads the
// bf16 result, with the copies issued by copyIn and copyOut.
func castRun(t *testing.T, x *Exec, copyIn func(dst uintptr, src unsafe.Pointer, n int64) error,
	copyOut func(dst unsafe.Pointer, src uintptr, n int64) error) ([]uint16, error) {
	t.Helper()
	in := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	a, err := x.Alloc(int64(4 * len(in)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free(a)
	b, err := x.Alloc(int64(2 * len(in)))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free(b)
	if err := copyIn(a.Ptr, unsafe.Pointer(&in[0]), int64(4*len(in))); err != nil {
		return nil, err
	}
	if err := x.Launch("cast_f32_bf16", D1(1), D1(32), 0, Ptr(b.Ptr), Ptr(a.Ptr), Int(len(in))); err != nil {
		return nil, err
	}
	out := make([]uint16, len(in))
	err = copyOut(unsafe.Pointer(&out[0]), b.Ptr, int64(2*len(out)))
	return out, err
}

func checkCast(t *testing.T, out []uint16) {
	t.Helper()
	for i, h := range out {
		got := math.Float32frombits(uint32(h) << 16)
		if got != float32(i+1) {
			t.Fatalf("element %d: got %v, want %d (bytes %#x)", i, got, i+1, h)
		}
	}
}

// TestCopyOrdering runs upload → kernel → download through Exec (the ordering contract)
// and checks the data arrive; then replays the orderings this layer used to have and
// checks that the emulated driver rejects them or returns the stale bytes.
func TestCopyOrdering(t *testing.T) {
	d, err := Open(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.Do(func(x *Exec) error {
		out, err := castRun(t, x, x.CopyIn, x.CopyOut)
		if err != nil {
			t.Fatalf("contract ordering: %v", err)
		}
		checkCast(t, out)

		// Old upload: drain the compute stream, then a synchronous cuMemcpyHtoD, which is a
		// legacy NULL-stream copy the non-blocking compute stream is not ordered after.
		oldIn := func(dst uintptr, src unsafe.Pointer, n int64) error {
			if err := x.Sync(); err != nil {
				return err
			}
			return x.drv.htod(dst, src, n, nullStream)
		}
		_, err = castRun(t, x, oldIn, x.CopyOut)
		if err == nil || !strings.Contains(err.Error(), "not ordered before it") {
			t.Fatalf("NULL-stream upload before a compute-stream kernel: err %v, want an ordering error", err)
		}
		if err := x.drv.sync(nullStream); err != nil {
			return err
		}

		// A download that is not waited for leaves the host buffer unwritten.
		noWait := func(dst unsafe.Pointer, src uintptr, n int64) error { return x.drv.dtoh(dst, src, n, x.compute) }
		out, err = castRun(t, x, x.CopyIn, noWait)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range out {
			if h != 0 {
				t.Fatalf("element %d of an unwaited download arrived (%#x); the emulator no longer defers downloads", i, h)
			}
		}
		return x.Sync()
	})
	if err != nil {
		t.Fatal(err)
	}
}

//go:build masscuda || masscudaemu

package device

import (
	"slices"
	"testing"
	"unsafe"
)

// TestCopyPeer uploads on device 0, peer-copies to device 1 and reads it back there; it
// needs two devices (two GPUs, or the emulator's).
func TestCopyPeer(t *testing.T) {
	a, err := Open(0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(1, nil)
	if err != nil {
		t.Skipf("a second device: %v", err)
	}
	defer b.Close()
	src := []float32{1, 2, 3, 4, 5, 6, 7}
	n := int64(4 * len(src))
	var sp, dp uintptr
	if err := a.Do(func(x *Exec) error {
		blk, err := x.Alloc(n)
		sp = blk.Ptr
		if err != nil {
			return err
		}
		return x.CopyIn(sp, unsafe.Pointer(&src[0]), n)
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.Do(func(x *Exec) error {
		blk, err := x.Alloc(n)
		dp = blk.Ptr
		if err != nil {
			return err
		}
		return x.Memset8(dp, 0, n)
	}); err != nil {
		t.Fatal(err)
	}
	if err := CopyPeer(b, dp, a, sp, n); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, len(src))
	if err := b.Do(func(x *Exec) error { return x.CopyOut(unsafe.Pointer(&got[0]), dp, n) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, src) {
		t.Fatalf("device 1 holds %v after the peer copy, want %v", got, src)
	}
	if err := CopyPeer(a, sp, a, sp, n); err == nil {
		t.Error("peer copy within one device accepted")
	}
}

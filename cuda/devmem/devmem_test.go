package devmem

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/mass-dev/mass/errclass"
)

// hostRaw allocates real host memory with a byte budget, standing in for the device when
// no GPU is present; pointers are the addresses of live Go slices.
type hostRaw struct {
	budget int64
	live   map[uintptr][]byte
	used   int64
}

func (h *hostRaw) Malloc(n int64) (uintptr, error) {
	if h.used+n > h.budget {
		return 0, fmt.Errorf("malloc %d: %w", n, ErrOutOfMemory)
	}
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(&b[0]))
	h.live[p] = b
	h.used += n
	return p, nil
}

func (h *hostRaw) Free(p uintptr) error {
	b, ok := h.live[p]
	if !ok {
		return errors.New("free of unknown pointer")
	}
	h.used -= int64(len(b))
	delete(h.live, p)
	return nil
}

func TestClass(t *testing.T) {
	tests := []struct{ in, want int64 }{
		{0, 512}, {1, 512}, {512, 512}, {513, 1024}, {1 << 20, 1 << 20},
		{1<<20 + 1, 2 << 20}, {5 << 20, 8 << 20}, {64 << 20, 64 << 20},
		{64<<20 + 1, 66 << 20},
	}
	for _, tc := range tests {
		if got := Class(tc.in); got != tc.want {
			t.Errorf("Class(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCacheReuse(t *testing.T) {
	raw := &hostRaw{budget: 1 << 30, live: map[uintptr][]byte{}}
	c := New(raw)
	a, err := c.Alloc(1000)
	if err != nil {
		t.Fatal(err)
	}
	c.Free(a)
	b, err := c.Alloc(900) // same 1024-byte class
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Ptr, a.Ptr; got != want {
		t.Errorf("second allocation at %#x, want reuse of %#x", got, want)
	}
	if got, want := c.Stats().DriverAllocs, 1; got != want {
		t.Errorf("driver allocations = %d, want %d", got, want)
	}
	st := c.Stats()
	if got, want := st.InUse, int64(1024); got != want {
		t.Errorf("in use = %d, want %d", got, want)
	}
	if _, err := c.Alloc(-1); err == nil {
		t.Error("negative size accepted")
	}
}

func TestCacheTrimsOnOutOfMemory(t *testing.T) {
	raw := &hostRaw{budget: 5 << 19, live: map[uintptr][]byte{}}
	c := New(raw)
	a, err := c.Alloc(2 << 20)
	if err != nil {
		t.Fatal(err)
	}
	c.Free(a)
	// A different class does not fit beside the cached 2 MiB block: the cache must release it.
	b, err := c.Alloc(1 << 20)
	if err != nil {
		t.Fatalf("allocation after trim: %v", err)
	}
	if got, want := c.Stats().Cached, int64(0); got != want {
		t.Errorf("cached = %d, want %d", got, want)
	}
	if _, err := c.Alloc(4 << 20); !errors.Is(err, ErrOutOfMemory) || !errors.Is(err, errclass.ErrTooLarge) {
		t.Errorf("over-budget allocation: err = %v, want ErrOutOfMemory (class errclass.ErrTooLarge)", err)
	}
	c.Free(b)
	if err := c.Trim(); err != nil {
		t.Fatal(err)
	}
	if got := len(raw.live); got != 0 {
		t.Errorf("%d blocks still allocated after Trim", got)
	}
}

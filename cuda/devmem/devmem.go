// Package devmem is the CUDA backend's caching device allocator: it rounds requests up to
// size classes and keeps freed blocks for reuse, so that a training step allocates from the
// driver only on its first pass. It knows nothing of CUDA; the device layer supplies the
// raw allocator.
package devmem

import (
	"errors"
	"fmt"
	"sync"

	"github.com/mass-dev/mass/errclass"
)

// Raw allocates and frees device memory. Implementations report an out-of-memory
// condition by returning an error that wraps ErrOutOfMemory, so that the cache can release
// its free blocks and retry.
type Raw interface {
	Malloc(bytes int64) (uintptr, error)
	Free(ptr uintptr) error
}

// ErrOutOfMemory is wrapped by Raw.Malloc errors when the device has no room.
// Its class is errclass.ErrTooLarge: the work does not fit the device.
var ErrOutOfMemory = errclass.New("device out of memory", errclass.ErrTooLarge)

// Block is one allocation: Ptr is valid for Size bytes (the requested size); Class is
// the rounded size actually reserved.
type Block struct {
	Ptr   uintptr
	Size  int64
	Class int64
}

// Stats reports the cache's state in bytes.
type Stats struct {
	InUse, Cached, Peak int64
	DriverAllocs        int
}

// Cache is a caching allocator over a Raw allocator. It is safe for concurrent use, though
// the device layer calls it from its one owner thread.
type Cache struct {
	raw  Raw
	mu   sync.Mutex
	free map[int64][]uintptr
	st   Stats
}

// New returns an empty cache over raw.
func New(raw Raw) *Cache { return &Cache{raw: raw, free: map[int64][]uintptr{}} }

// Class returns the size class of a request: 512-byte granules up to 1 MiB, then powers
// of two up to 64 MiB, then 2 MiB granules (big weights and activations waste little).
func Class(bytes int64) int64 {
	const small, big, huge = 512, 1 << 20, 64 << 20
	switch {
	case bytes <= 0:
		return small
	case bytes <= big:
		return (bytes + small - 1) / small * small
	case bytes <= huge:
		c := int64(big)
		for c < bytes {
			c <<= 1
		}
		return c
	default:
		const g = 2 << 20
		return (bytes + g - 1) / g * g
	}
}

// Alloc returns a block of at least bytes, reusing a cached one of the same class when
// there is one. On out-of-memory it releases every cached block and tries once more.
func (c *Cache) Alloc(bytes int64) (Block, error) {
	if bytes < 0 {
		return Block{}, fmt.Errorf("allocate %d bytes: negative size", bytes)
	}
	cl := Class(bytes)
	c.mu.Lock()
	defer c.mu.Unlock()
	if l := c.free[cl]; len(l) > 0 {
		p := l[len(l)-1]
		c.free[cl] = l[:len(l)-1]
		c.st.Cached -= cl
		c.use(cl)
		return Block{Ptr: p, Size: bytes, Class: cl}, nil
	}
	p, err := c.raw.Malloc(cl)
	if errors.Is(err, ErrOutOfMemory) {
		if terr := c.trimLocked(); terr != nil {
			return Block{}, fmt.Errorf("allocate %d bytes: %w (and releasing the cache: %v)", bytes, err, terr)
		}
		p, err = c.raw.Malloc(cl)
	}
	if err != nil {
		return Block{}, fmt.Errorf("allocate %d bytes (%d in use, %d cached): %w", bytes, c.st.InUse, c.st.Cached, err)
	}
	c.st.DriverAllocs++
	c.use(cl)
	return Block{Ptr: p, Size: bytes, Class: cl}, nil
}

func (c *Cache) use(cl int64) {
	c.st.InUse += cl
	c.st.Peak = max(c.st.Peak, c.st.InUse)
}

// Free returns b to the cache. Freeing the zero Block is a no-op.
func (c *Cache) Free(b Block) {
	if b.Ptr == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.free[b.Class] = append(c.free[b.Class], b.Ptr)
	c.st.InUse -= b.Class
	c.st.Cached += b.Class
}

// Trim hands every cached block back to the raw allocator.
func (c *Cache) Trim() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trimLocked()
}

func (c *Cache) trimLocked() error {
	var first error
	for cl, l := range c.free {
		for _, p := range l {
			if err := c.raw.Free(p); err != nil && first == nil {
				first = fmt.Errorf("free cached block of %d bytes: %w", cl, err)
			}
			c.st.Cached -= cl
		}
		delete(c.free, cl)
	}
	return first
}

// Stats returns a snapshot of the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st
}

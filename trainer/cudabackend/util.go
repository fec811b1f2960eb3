//go:build masscuda || masscudaemu

package cudabackend

import (
	"unsafe"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/devmem"
)

func ptrOf(b []cuda.BF16) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// scope allocates device blocks for one window and frees them all at the end.
type scope struct {
	x      *device.Exec
	blocks []devmem.Block
}

func (s *scope) alloc(bytes int) (uintptr, error) {
	b, err := s.x.Alloc(int64(bytes))
	if err != nil {
		return 0, err
	}
	s.blocks = append(s.blocks, b)
	return b.Ptr, nil
}

// bf16 and f32 allocate n elements.
func (s *scope) bf16(n int) (uintptr, error) { return s.alloc(2 * n) }
func (s *scope) f32(n int) (uintptr, error)  { return s.alloc(4 * n) }

func (s *scope) release() {
	for _, b := range s.blocks {
		s.x.Free(b)
	}
	s.blocks = nil
}

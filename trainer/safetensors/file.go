package safetensors

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// File is an open, memory-mapped safetensors file. Its methods are safe for
// concurrent readers; byte slices it returns are valid until Close.
type File struct {
	Path   string
	Header *Header
	data   []byte // the whole mapping
}

// Open maps path read-only after validating its header.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open safetensors %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrInvalid, path)
	}
	h, err := ReadHeader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sf := &File{Path: path, Header: h}
	if st.Size() > 0 {
		sf.data, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return nil, fmt.Errorf("mmap %s: %w", path, err)
		}
	}
	return sf, nil
}

// Close unmaps the file.
func (f *File) Close() error {
	if f.data == nil {
		return nil
	}
	err := unix.Munmap(f.data)
	f.data = nil
	return err
}

// Info returns the description of a tensor.
func (f *File) Info(name string) (TensorInfo, bool) {
	ti, ok := f.Header.Tensors[name]
	return ti, ok
}

// Bytes returns the raw bytes of a tensor, aliasing the mapping.
func (f *File) Bytes(name string) ([]byte, error) {
	ti, ok := f.Header.Tensors[name]
	if !ok {
		return nil, fmt.Errorf("tensor %q not in %s", name, f.Path)
	}
	s := f.Header.DataStart
	return f.data[s+ti.Offsets[0] : s+ti.Offsets[1]], nil
}

// Float32s returns a tensor converted to float32, with its shape.
func (f *File) Float32s(name string) ([]float32, []int, error) {
	b, err := f.Bytes(name)
	if err != nil {
		return nil, nil, err
	}
	ti := f.Header.Tensors[name]
	v, err := DecodeFloat32(ti.DType, b)
	if err != nil {
		return nil, nil, fmt.Errorf("tensor %q in %s: %w", name, f.Path, err)
	}
	return v, append([]int(nil), ti.Shape...), nil
}

// Evict advises the kernel that the mapped pages wholly inside a tensor's bytes are not
// needed now (MADV_DONTNEED): a later read faults them in again from the file, so this
// only lowers the resident set of a reader that has copied the tensor out.
func (f *File) Evict(name string) error {
	ti, ok := f.Header.Tensors[name]
	if !ok || f.data == nil {
		return nil
	}
	pg := int64(os.Getpagesize())
	lo := (f.Header.DataStart + ti.Offsets[0] + pg - 1) / pg * pg
	hi := (f.Header.DataStart + ti.Offsets[1]) / pg * pg
	if hi <= lo {
		return nil
	}
	return unix.Madvise(f.data[lo:hi], unix.MADV_DONTNEED)
}

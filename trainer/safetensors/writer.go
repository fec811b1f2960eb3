package safetensors

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Tensor is one tensor to write.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// F32Tensor builds a tensor of dtype dt from float32 values.
func F32Tensor(name string, dt DType, shape []int, v []float32) (Tensor, error) {
	b, err := EncodeFloat32(dt, v)
	if err != nil {
		return Tensor{}, fmt.Errorf("tensor %s: %w", name, err)
	}
	return Tensor{Name: name, DType: dt, Shape: shape, Data: b}, nil
}

// Write writes tensors (sorted by name) and metadata to path atomically:
// a temporary file in the same directory is renamed into place.
func Write(path string, tensors []Tensor, metadata map[string]string) error {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	hdr := make(map[string]any, len(ts)+1)
	if len(metadata) > 0 {
		hdr["__metadata__"] = metadata
	}
	var off int64
	for _, t := range ts {
		ti := TensorInfo{DType: t.DType, Shape: t.Shape, Offsets: [2]int64{off, off + int64(len(t.Data))}}
		if ti.Shape == nil {
			ti.Shape = []int{}
		}
		if err := validateInfo(t.Name, ti, off+int64(len(t.Data))); err != nil {
			return err
		}
		if _, dup := hdr[t.Name]; dup {
			return fmt.Errorf("%w: duplicate tensor %q", ErrInvalid, t.Name)
		}
		hdr[t.Name] = ti
		off += int64(len(t.Data))
	}
	js, err := json.Marshal(hdr)
	if err != nil {
		return fmt.Errorf("encode header: %w", err)
	}
	for len(js)%8 != 0 { // pad with spaces so the data section is aligned
		js = append(js, ' ')
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*.safetensors")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	var pre [8]byte
	binary.LittleEndian.PutUint64(pre[:], uint64(len(js)))
	w.Write(pre[:])
	w.Write(js)
	for _, t := range ts {
		w.Write(t.Data)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

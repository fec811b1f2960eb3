// Package safetensors reads and writes the safetensors format: a validated
// JSON header, memory-mapped tensor data, sharded model folders with
// model.safetensors.index.json, and bf16/f16/f32/f8 conversions.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/mass-dev/mass/errclass"
)

// MaxHeaderBytes bounds the JSON header so a hostile file cannot make the
// reader allocate without limit.
const MaxHeaderBytes = 100 << 20

// ErrInvalid marks a malformed file (class errclass.ErrInvalid).
var ErrInvalid = errclass.New("invalid safetensors", errclass.ErrInvalid)

// DType is a safetensors element type name.
type DType string

// The element types this package knows.
const (
	F64    DType = "F64"
	F32    DType = "F32"
	F16    DType = "F16"
	BF16   DType = "BF16"
	F8E4M3 DType = "F8_E4M3"
	I64    DType = "I64"
	I32    DType = "I32"
	I16    DType = "I16"
	I8     DType = "I8"
	U8     DType = "U8"
	Bool   DType = "BOOL"
)

// Size returns the element size in bytes, or 0 for an unknown type.
func (d DType) Size() int {
	switch d {
	case F64, I64:
		return 8
	case F32, I32:
		return 4
	case F16, BF16, I16:
		return 2
	case F8E4M3, I8, U8, Bool:
		return 1
	}
	return 0
}

// TensorInfo describes one tensor; Offsets are relative to the data section.
type TensorInfo struct {
	DType   DType    `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// NumElements is the product of the shape (1 for a scalar).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// Header is a parsed and validated safetensors header.
type Header struct {
	Tensors  map[string]TensorInfo
	Metadata map[string]string
	// DataStart is the file offset of the data section (8 + header length).
	DataStart int64
	// DataLen is the length of the data section the tensors cover.
	DataLen int64
}

// Names returns the tensor names in data order.
func (h *Header) Names() []string {
	names := make([]string, 0, len(h.Tensors))
	for n := range h.Tensors {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := h.Tensors[names[i]], h.Tensors[names[j]]
		if a.Offsets[0] != b.Offsets[0] {
			return a.Offsets[0] < b.Offsets[0]
		}
		return names[i] < names[j]
	})
	return names
}

// ReadHeader reads and validates the header of a file of the given size.
func ReadHeader(r io.ReaderAt, size int64) (*Header, error) {
	if size < 8 {
		return nil, fmt.Errorf("%w: file of %d bytes is shorter than the 8-byte length prefix", ErrInvalid, size)
	}
	var pre [8]byte
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, fmt.Errorf("read header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(pre[:])
	if n > MaxHeaderBytes || int64(n) > size-8 {
		return nil, fmt.Errorf("%w: header length %d exceeds file size %d or limit %d", ErrInvalid, n, size, MaxHeaderBytes)
	}
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, 8); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	return ParseHeader(buf, size-8-int64(n))
}

// ParseHeader validates the JSON header text given the length of the data
// section that follows it: known dtypes, non-negative shapes whose byte size
// matches the offsets, offsets inside the data section and not overlapping.
func ParseHeader(js []byte, dataLen int64) (*Header, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, fmt.Errorf("%w: header is not a JSON object: %v", ErrInvalid, err)
	}
	h := &Header{Tensors: make(map[string]TensorInfo, len(raw)), DataStart: 8 + int64(len(js))}
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &h.Metadata); err != nil {
				return nil, fmt.Errorf("%w: __metadata__ must map strings to strings: %v", ErrInvalid, err)
			}
			continue
		}
		var ti TensorInfo
		dec := json.NewDecoder(bytes.NewReader(msg))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ti); err != nil {
			return nil, fmt.Errorf("%w: tensor %q: %v", ErrInvalid, name, err)
		}
		if err := validateInfo(name, ti, dataLen); err != nil {
			return nil, err
		}
		h.Tensors[name] = ti
	}
	names := h.Names()
	var end int64
	for _, n := range names {
		ti := h.Tensors[n]
		if ti.Offsets[0] < end {
			return nil, fmt.Errorf("%w: tensor %q overlaps the previous tensor", ErrInvalid, n)
		}
		end = ti.Offsets[1]
	}
	h.DataLen = end
	return h, nil
}

func validateInfo(name string, ti TensorInfo, dataLen int64) error {
	size := ti.DType.Size()
	if size == 0 {
		return fmt.Errorf("%w: tensor %q has unsupported dtype %q", ErrInvalid, name, ti.DType)
	}
	if ti.Shape == nil {
		return fmt.Errorf("%w: tensor %q has no shape", ErrInvalid, name)
	}
	n := int64(1)
	for _, d := range ti.Shape {
		if d < 0 {
			return fmt.Errorf("%w: tensor %q has negative dimension %d", ErrInvalid, name, d)
		}
		if d > 0 && n > math.MaxInt64/8/int64(d) {
			return fmt.Errorf("%w: tensor %q shape %v overflows", ErrInvalid, name, ti.Shape)
		}
		n *= int64(d)
	}
	b, e := ti.Offsets[0], ti.Offsets[1]
	if b < 0 || e < b || e > dataLen {
		return fmt.Errorf("%w: tensor %q offsets [%d,%d] outside data section of %d bytes", ErrInvalid, name, b, e, dataLen)
	}
	if e-b != n*int64(size) {
		return fmt.Errorf("%w: tensor %q of shape %v %s needs %d bytes, offsets give %d", ErrInvalid, name, ti.Shape, ti.DType, n*int64(size), e-b)
	}
	return nil
}

package safetensors

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"
)

func FuzzReadHeader(f *testing.F) {
	seed := func(h string, data int) []byte {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, uint64(len(h)))
		b = append(b, h...)
		return append(b, make([]byte, data)...)
	}
	f.Add(seed(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 8))
	f.Add(seed(`{"__metadata__":{"format":"pt"},"w":{"dtype":"BF16","shape":[1,2],"data_offsets":[0,4]}}`, 4))
	f.Add(seed(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[0],"data_offsets":[4,4]}}`, 4))
	f.Add(seed(`{}`, 0))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ReadHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		// A header that validates must describe bytes that exist.
		data := int64(len(b)) - h.DataStart
		for name, ti := range h.Tensors {
			if ti.Offsets[1] > data || ti.Offsets[0] > ti.Offsets[1] {
				t.Fatalf("tensor %q offsets %v outside %d bytes", name, ti.Offsets, data)
			}
			if got, want := ti.Offsets[1]-ti.Offsets[0], ti.NumElements()*int64(ti.DType.Size()); got != want {
				t.Fatalf("tensor %q spans %d bytes, shape needs %d", name, got, want)
			}
		}
	})
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{"total_size":8},"weight_map":{"a":"model-00001-of-00002.safetensors","b":"model-00002-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{"a":"../etc/passwd"}}`))
	f.Add([]byte(`{"weight_map":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		shards, err := ParseIndex(b)
		if err != nil {
			return
		}
		for _, s := range shards {
			if s != filepath.Base(s) || s == "." || s == ".." || s == "" {
				t.Fatalf("accepted shard name %q", s)
			}
		}
	})
}

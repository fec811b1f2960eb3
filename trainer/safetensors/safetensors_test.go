package safetensors

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestRoundTripDtypes(t *testing.T) {
	dir := t.TempDir()
	vals := []float32{0, 1, -2.5, 0.1, 3.140625, 65504, -1e-3}
	var ts []Tensor
	for _, dt := range []DType{F32, F64, BF16, F16} {
		tt, err := F32Tensor("w."+string(dt), dt, []int{7}, vals)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tt)
	}
	p := filepath.Join(dir, "a.safetensors")
	if err := Write(p, ts, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.Header.Metadata["format"], "pt"; got != want {
		t.Errorf("metadata format = %q, want %q", got, want)
	}
	tests := []struct {
		dt  DType
		tol float64
	}{{F32, 0}, {F64, 0}, {BF16, 1.0 / 128}, {F16, 1.0 / 1024}}
	for _, tc := range tests {
		got, shape, err := f.Float32s("w." + string(tc.dt))
		if err != nil {
			t.Fatal(err)
		}
		if len(shape) != 1 || shape[0] != 7 {
			t.Errorf("%s shape = %v, want [7]", tc.dt, shape)
		}
		for i, want := range vals {
			if d := math.Abs(float64(got[i] - want)); d > tc.tol*math.Abs(float64(want))+1e-7 {
				t.Errorf("%s[%d] = %v, want %v", tc.dt, i, got[i], want)
			}
		}
	}
}

func TestConversionsExact(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		f := F16ToF32(uint16(b))
		if f != f {
			continue
		}
		if got := F32ToF16(f); got != uint16(b) {
			t.Fatalf("f16 %#04x -> %v -> %#04x", b, f, got)
		}
		g := BF16ToF32(uint16(b))
		if g != g {
			continue
		}
		if got := F32ToBF16(g); got != uint16(b) {
			t.Fatalf("bf16 %#04x -> %v -> %#04x", b, g, got)
		}
	}
	for c := 0; c < 256; c++ {
		f := E4M3ToF32(uint8(c))
		if f != f {
			continue
		}
		got := F32ToE4M3(f)
		if E4M3ToF32(got) != f {
			t.Fatalf("e4m3 %#02x -> %v -> %#02x", c, f, got)
		}
	}
	if got, want := E4M3ToF32(0x7e), float32(448); got != want {
		t.Errorf("e4m3 max = %v, want %v", got, want)
	}
}

func TestShardedModel(t *testing.T) {
	dir := t.TempDir()
	var ts []Tensor
	for _, n := range []string{"a", "b", "c", "d"} {
		tt, _ := F32Tensor(n, BF16, []int{2, 3}, []float32{1, 2, 3, 4, 5, 6})
		ts = append(ts, tt)
	}
	if err := WriteSharded(dir, ts, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, IndexFile)); err != nil {
		t.Fatalf("index not written: %v", err)
	}
	m, err := OpenModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got, want := len(m.Names()), 4; got != want {
		t.Fatalf("names = %d, want %d", got, want)
	}
	v, _, err := m.Float32s("c")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v[5], float32(6); got != want {
		t.Errorf("c[5] = %v, want %v", got, want)
	}
}

func rawFile(t *testing.T, header string, data int) string {
	t.Helper()
	b := make([]byte, 8, 8+len(header)+data)
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	b = append(b, make([]byte, data)...)
	p := filepath.Join(t.TempDir(), "x.safetensors")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBadHeaders(t *testing.T) {
	tests := []struct {
		name, header string
		data         int
	}{
		{"not json", "{", 0},
		{"unknown dtype", `{"a":{"dtype":"Q4","shape":[1],"data_offsets":[0,1]}}`, 1},
		{"size mismatch", `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 8},
		{"past end", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 4},
		{"overlap", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}`, 8},
		{"negative dim", `{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, 0},
		{"unknown field", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, 4},
		{"bad metadata", `{"__metadata__":{"a":1}}`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(rawFile(t, tc.header, tc.data))
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Open = %v, want ErrInvalid", err)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "short")
	os.WriteFile(p, []byte{1, 2, 3}, 0o644)
	if _, err := Open(p); !errors.Is(err, ErrInvalid) {
		t.Errorf("short file: %v, want ErrInvalid", err)
	}
}

func TestE4M3FastMatchesSlow(t *testing.T) {
	var vals []float32
	for c := 0; c < 0x7f; c++ {
		a, b := E4M3ToF32(uint8(c)), E4M3ToF32(uint8(c+1))
		mid := (a + b) / 2
		vals = append(vals, a, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1000), -mid)
	}
	for i := 0; i < 20000; i++ {
		vals = append(vals, float32(math.Ldexp(float64(i%997)/997, i%20-12)))
	}
	vals = append(vals, 447.99, 448, 1e9, 0, float32(math.Copysign(0, -1)))
	for _, v := range vals {
		if got, want := F32ToE4M3(v), f32ToE4M3Slow(v); got != want {
			t.Fatalf("F32ToE4M3(%v) = %#02x, reference %#02x", v, got, want)
		}
	}
}

// TestEvict: a tensor read again after Evict has the same values (the pages come back
// from the file), and names it does not hold are ignored.
func TestEvict(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.safetensors")
	v := make([]float32, 5000)
	for i := range v {
		v[i] = float32(i) / 7
	}
	tn, err := F32Tensor("w", BF16, []int{50, 100}, v)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []Tensor{tn}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, _, err := f.Float32s("w")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Evict("w"); err != nil {
		t.Fatal(err)
	}
	if err := f.Evict("absent"); err != nil {
		t.Fatal(err)
	}
	after, _, err := f.Float32s("w")
	if err != nil {
		t.Fatal(err)
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("value %d: %v before Evict, %v after", i, before[i], after[i])
		}
	}
}

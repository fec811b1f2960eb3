package helper

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

func frame(body []byte) []byte {
	var b bytes.Buffer
	_ = WriteFrame(&b, body)
	return b.Bytes()
}

func header(n uint32) []byte {
	return binary.BigEndian.AppendUint32(nil, n)
}

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    string
		wantErr error
	}{
		{"ok", frame([]byte(`{"op":"stat"}`)), 100, `{"op":"stat"}`, nil},
		{"empty body", frame(nil), 100, "", nil},
		{"exactly max", frame([]byte("12345")), 5, "12345", nil},
		{"clean eof", nil, 100, "", io.EOF},
		{"short header", []byte{0, 0}, 100, "", ErrBadFrame},
		{"over max", frame([]byte("123456")), 5, "", sandbox.ErrTooLarge},
		{"lying header", header(1<<32 - 1), 16 << 20, "", sandbox.ErrTooLarge},
		{"lying header under max", append(header(1<<20), "abc"...), 16 << 20, "", ErrBadFrame},
	}
	for _, tt := range tests {
		got, err := ReadFrame(bytes.NewReader(tt.in), tt.max)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("%s: err = %v, want %v", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %q, %v, want %q", tt.name, got, err, tt.want)
		}
	}
}

// A header announcing 4 GiB over a short stream must not allocate it.
func TestReadFrameAllocatesWhatArrives(t *testing.T) {
	in := append(header(MaxResponseBytes), make([]byte, 1000)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < 20; i++ {
		if _, err := ReadFrame(bytes.NewReader(in), MaxResponseBytes); !errors.Is(err, ErrBadFrame) {
			t.Fatalf("truncated frame: %v, want ErrBadFrame", err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 20*(256<<10) {
		t.Errorf("20 truncated frames announcing %d bytes allocated %d bytes", MaxResponseBytes, got)
	}
}

func TestServe(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	for _, req := range []string{`{"op":"read","path":"a.txt"}`, `not json`, `{"op":"stat","path":"missing"}`} {
		in.Write(frame([]byte(req)))
	}
	var out bytes.Buffer
	if err := Serve(&in, &out, NewServer(root), nil); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var kinds []string
	for {
		b, err := ReadFrame(&out, MaxResponseBytes)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var r Response
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.OK && (r.Read == nil || r.Read.Content != "hello\n") {
			t.Errorf("read response %+v", r)
		}
		kinds = append(kinds, r.Kind)
	}
	if got, want := kinds, []string{"", KindInvalid, KindNotFound}; !slices.Equal(got, want) {
		t.Errorf("response kinds = %q, want %q", got, want)
	}
	// A bad frame ends the session with an error; an oversized one is refused before reading it.
	if err := Serve(bytes.NewReader(header(MaxRequestBytes+1)), io.Discard, NewServer(root), nil); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("Serve of an oversized frame: %v, want ErrTooLarge", err)
	}
	if err := Serve(bytes.NewReader([]byte{1}), io.Discard, NewServer(root), nil); !errors.Is(err, ErrBadFrame) {
		t.Errorf("Serve of a short header: %v, want ErrBadFrame", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add(frame([]byte(`{"op":"read"}`)))
	f.Add(header(1<<32 - 1))
	f.Add([]byte{0, 0, 0})
	f.Add(append(frame([]byte("x")), frame([]byte("yz"))...))
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 1 << 10
		r := bytes.NewReader(in)
		for {
			b, err := ReadFrame(r, max)
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrBadFrame) {
					t.Fatalf("error %v wraps neither io.EOF nor ErrBadFrame", err)
				}
				return
			}
			if len(b) > max {
				t.Fatalf("frame of %d bytes over the %d cap", len(b), max)
			}
			// What was read re-encodes to the bytes consumed.
			if got := frame(b); !bytes.Equal(got, in[:len(got)]) {
				t.Fatalf("frame %q does not re-encode to its input", b)
			}
			in = in[4+len(b):]
		}
	})
}

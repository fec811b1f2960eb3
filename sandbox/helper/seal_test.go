package helper

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
)

// TestSealedServe runs Serve sealed: sealed requests are answered with
// sealed responses; a forged, replayed or unsealed frame ends the session.
func TestSealedServe(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(root+"/a.txt", []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{7}, SealKeyBytes)
	host := HostSeal(key)
	var in bytes.Buffer
	req := []byte(`{"op":"read","path":"a.txt"}`)
	for i := 0; i < 2; i++ {
		if err := WriteFrame(&in, host.Wrap(req)); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := Serve(&in, &out, NewServer(root), HelperSeal(key)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		f, err := ReadFrame(&out, MaxResponseBytes+SealTagBytes)
		if err != nil {
			t.Fatal(err)
		}
		body, err := host.Open(f)
		if err != nil || !bytes.Contains(body, []byte(`hi\n`)) {
			t.Fatalf("response %d: %q %v", i, body, err)
		}
	}
	if _, err := host.Open(append([]byte(`{"ok":true}`), make([]byte, SealTagBytes)...)); !errors.Is(err, ErrBadFrame) {
		t.Errorf("a forged response passed the host's seal: %v", err)
	}

	// The helper refuses an unsealed request, a replayed one and one under another key.
	replayHost := HostSeal(key)
	first := replayHost.Wrap(req)
	for name, frames := range map[string][][]byte{
		"unsealed":    {req},
		"replayed":    {first, first},
		"another key": {HostSeal(bytes.Repeat([]byte{8}, SealKeyBytes)).Wrap(req)},
	} {
		var in bytes.Buffer
		for _, f := range frames {
			_ = WriteFrame(&in, f)
		}
		err := Serve(&in, io.Discard, NewServer(root), HelperSeal(key))
		if !errors.Is(err, ErrBadFrame) {
			t.Errorf("%s request: Serve = %v, want ErrBadFrame", name, err)
		}
	}
}

// FuzzSealOpen feeds the host's seal frames an agent could write into a
// helper's output: only a frame made with the key may open.
func FuzzSealOpen(f *testing.F) {
	key := bytes.Repeat([]byte{3}, SealKeyBytes)
	f.Add([]byte(`{"ok":true}`))
	f.Add(HelperSeal(key).Wrap([]byte(`{"ok":true}`)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		host := HostSeal(key)
		body, err := host.Open(frame)
		if err != nil {
			return
		}
		if !bytes.Equal(HelperSeal(key).Wrap(body), frame) {
			t.Fatalf("opened %q from a frame that is not its sealing", body)
		}
	})
}

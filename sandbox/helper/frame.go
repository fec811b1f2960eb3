package helper

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mass-dev/mass/sandbox"
)

// Frames of the serve mode: a 4-byte big-endian length, then that many bytes
// of JSON (a Request to the helper, a Response back).
const frameHeader = 4

// ErrBadFrame marks a frame stream that cannot be trusted any further
// (short header, truncated body, length over the cap).
var ErrBadFrame = errors.New("bad frame")

// WriteFrame writes body as one frame.
func WriteFrame(w io.Writer, body []byte) error {
	if uint64(len(body)) > 1<<32-1 {
		return fmt.Errorf("write frame of %d bytes: %w", len(body), sandbox.ErrTooLarge)
	}
	var h [frameHeader]byte
	binary.BigEndian.PutUint32(h[:], uint32(len(body)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(body)
	return err
}

// ReadFrame reads one frame of at most max bytes. The length is checked
// before the body is read, and memory grows only with the bytes that really
// arrive, so a lying header costs nothing. io.EOF means a clean end between
// frames; every other failure wraps ErrBadFrame (and ErrTooLarge when the
// length is over max).
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var h [frameHeader]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("frame header: %v: %w", err, ErrBadFrame)
	}
	n := int64(binary.BigEndian.Uint32(h[:]))
	if n > int64(max) {
		return nil, fmt.Errorf("frame of %d bytes, more than %d: %w", n, max, errors.Join(ErrBadFrame, sandbox.ErrTooLarge))
	}
	var buf bytes.Buffer
	buf.Grow(int(min(n, 64<<10)))
	if got, err := io.CopyN(&buf, r, n); err != nil {
		return nil, fmt.Errorf("frame body: %d of %d bytes: %v: %w", got, n, err, ErrBadFrame)
	}
	return buf.Bytes(), nil
}

// Serve answers framed requests from r on w, one at a time, until r ends
// cleanly (nil) or carries a bad frame (an error). A request that does not
// decode gets an invalid response; the stream itself stays usable. With a
// seal, every frame must pass it (a frame that fails ends the session) and
// every response is sealed.
func Serve(r io.Reader, w io.Writer, srv *Server, seal *Seal) error {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriterSize(w, 64<<10)
	max := MaxRequestBytes
	if seal != nil {
		max += SealTagBytes
	}
	for {
		frame, err := ReadFrame(in, max)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		if seal != nil {
			if frame, err = seal.Open(frame); err != nil {
				return fmt.Errorf("serve: %w", err)
			}
		}
		var resp Response
		if req, err := DecodeRequest(bytes.NewReader(frame)); err != nil {
			resp = Response{Kind: KindInvalid, Error: err.Error()}
		} else {
			resp = srv.Do(req)
		}
		frame = nil
		body, err := json.Marshal(resp)
		if err == nil && len(body) > MaxResponseBytes {
			err = fmt.Errorf("response of %d bytes over the %d cap", len(body), MaxResponseBytes)
		}
		if err != nil {
			body, _ = json.Marshal(Response{Kind: KindTooLarge, Error: err.Error()})
		}
		if seal != nil {
			body = seal.Wrap(body)
		}
		if err := WriteFrame(out, body); err != nil {
			return fmt.Errorf("serve: write response: %w", err)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("serve: write response: %w", err)
		}
	}
}

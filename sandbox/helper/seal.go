package helper

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// A Seal authenticates the frames of one serve session. Hiding the
// helper's memory is not enough under gVisor: its /proc/PID/fd links stay
// openable by a process of the same uid even once it is non-dumpable, so
// an agent could write a forged response into the helper's stdout pipe or
// inject a request into its stdin (F1 by another door). The host therefore
// sends a fresh random key as a session's first frame, at a moment no
// agent process can read it (runc: the helper is non-dumpable from exec;
// runsc: no agent process is alive), and every later frame carries an
// HMAC-SHA256 over its direction, its sequence number and its body. A
// forged, injected, replayed or reordered frame fails the check and ends
// the session; a stolen one only loses that exchange.
type Seal struct {
	key        []byte
	sent, recv uint64
	out, in    byte // direction tags of what this side sends and receives
}

// SealKeyBytes is the size of a session key; SealTagBytes of each tag.
const (
	SealKeyBytes = 32
	SealTagBytes = sha256.Size
)

// Directions.
const (
	dirRequest  = 'q'
	dirResponse = 'r'
)

// HostSeal is the host's side of a session: it seals requests and opens
// responses. HelperSeal is the helper's.
func HostSeal(key []byte) *Seal { return &Seal{key: key, out: dirRequest, in: dirResponse} }

// HelperSeal is the helper's side of a session keyed with key.
func HelperSeal(key []byte) *Seal { return &Seal{key: key, out: dirResponse, in: dirRequest} }

func (s *Seal) tag(dir byte, seq uint64, body []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	var h [9]byte
	h[0] = dir
	binary.BigEndian.PutUint64(h[1:], seq)
	m.Write(h[:])
	m.Write(body)
	return m.Sum(nil)
}

// Wrap returns body with the tag of the next outgoing frame appended.
func (s *Seal) Wrap(body []byte) []byte {
	t := s.tag(s.out, s.sent, body)
	s.sent++
	return append(append(make([]byte, 0, len(body)+len(t)), body...), t...)
}

// Open checks the tag of the next incoming frame and returns its body.
func (s *Seal) Open(frame []byte) ([]byte, error) {
	if len(frame) < SealTagBytes {
		return nil, fmt.Errorf("sealed frame of %d bytes has no tag: %w", len(frame), ErrBadFrame)
	}
	body, got := frame[:len(frame)-SealTagBytes], frame[len(frame)-SealTagBytes:]
	if !hmac.Equal(got, s.tag(s.in, s.recv, body)) {
		return nil, fmt.Errorf("frame %d fails its seal (forged, injected or reordered): %w", s.recv, ErrBadFrame)
	}
	s.recv++
	return body, nil
}

// ReadSealKey reads a session's first frame, its key.
func ReadSealKey(r io.Reader) ([]byte, error) {
	k, err := ReadFrame(r, SealKeyBytes)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	if len(k) != SealKeyBytes {
		return nil, fmt.Errorf("session key of %d bytes, want %d: %w", len(k), SealKeyBytes, ErrBadFrame)
	}
	return k, nil
}

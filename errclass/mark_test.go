package errclass

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestMark(t *testing.T) {
	cause := errors.New("cause")
	err := fmt.Errorf("ctx: %w", Mark(fmt.Errorf("inner: %w", cause), ErrTooLarge))
	if got, want := err.Error(), "ctx: inner: cause"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) || !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrInvalid) {
		t.Errorf("%v: want it to match its cause and ErrTooLarge only", err)
	}
	if Mark(nil, ErrInvalid) != nil {
		t.Error("Mark(nil) is not nil")
	}
}

func TestMissing(t *testing.T) {
	_, err := os.ReadFile(filepath.Join(t.TempDir(), "config.json"))
	got := Missing(err)
	if !errors.Is(got, ErrNotFound) || !errors.Is(got, fs.ErrNotExist) || got.Error() != err.Error() {
		t.Errorf("Missing(%v) = %v, want ErrNotFound with the same text", err, got)
	}
	other := errors.New("permission denied")
	if Missing(other) != other || Missing(nil) != nil {
		t.Error("Missing changed an error that is not fs.ErrNotExist")
	}
}

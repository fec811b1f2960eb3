package tokenizer

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

// A missing tokenizer.json is ErrNotFound, one this package does not run
// ErrUnsupported of class ErrInvalid.
func TestErrorClasses(t *testing.T) {
	if _, err := LoadFile(filepath.Join(t.TempDir(), "tokenizer.json")); !errors.Is(err, errclass.ErrNotFound) {
		t.Errorf("missing tokenizer.json: %v, want ErrNotFound", err)
	}
	_, err := Parse([]byte(`{"model":{"type":"WordPiece","vocab":{}}}`))
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, errclass.ErrInvalid) {
		t.Errorf("a WordPiece tokenizer: %v, want ErrUnsupported (class ErrInvalid)", err)
	}
}

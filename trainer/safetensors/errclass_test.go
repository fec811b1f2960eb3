package safetensors

import (
	"errors"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

// A folder without weights is ErrNotFound; a malformed file ErrInvalid.
func TestErrorClasses(t *testing.T) {
	if _, err := OpenModel(t.TempDir()); !errors.Is(err, errclass.ErrNotFound) {
		t.Errorf("OpenModel of an empty folder = %v, want ErrNotFound", err)
	}
	if !errors.Is(ErrInvalid, errclass.ErrInvalid) {
		t.Error("safetensors.ErrInvalid is not of class ErrInvalid")
	}
}

package errclass_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

func TestClassesAreDistinct(t *testing.T) {
	all := []error{errclass.ErrNotFound, errclass.ErrInvalid, errclass.ErrConflict, errclass.ErrUnavailable,
		errclass.ErrUnauthorized, errclass.ErrTooLarge, errclass.ErrDenied, errclass.ErrTimeout, errclass.ErrClosed}
	for i, a := range all {
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v matches %v", a, b)
			}
		}
	}
	specific := fmt.Errorf("sandbox engine %w", errclass.ErrUnavailable)
	if !errors.Is(fmt.Errorf("create: %w", specific), errclass.ErrUnavailable) {
		t.Error("a component sentinel wrapping a class does not match the class")
	}
}

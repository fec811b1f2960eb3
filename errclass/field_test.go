package errclass

import (
	"errors"
	"fmt"
	"testing"
)

func TestFieldError(t *testing.T) {
	for _, c := range []struct {
		e    FieldError
		want string
	}{
		{FieldError{File: "spec.yaml", Line: 6, Field: "limits.cpus", Msg: "must be a number"}, "spec.yaml:6: limits.cpus: must be a number"},
		{FieldError{Line: 3, Field: "prompt", Msg: "is empty"}, "3: prompt: is empty"},
		{FieldError{Field: "seconds", Msg: "got a JSON string, want a number"}, "seconds: got a JSON string, want a number"},
		{FieldError{Msg: "not valid YAML"}, "not valid YAML"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		var fe *FieldError
		err := fmt.Errorf("wrapped: %w", &c.e)
		if !errors.Is(err, ErrInvalid) || !errors.As(err, &fe) || fe.Field != c.e.Field {
			t.Errorf("%v: want class invalid and the field error found", err)
		}
	}
}

func TestNew(t *testing.T) {
	own := New("invalid ledger", ErrInvalid)
	err := fmt.Errorf("line 3: %w", own)
	if got, want := err.Error(), "line 3: invalid ledger"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, own) || !errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) {
		t.Errorf("%v: want its own sentinel and ErrInvalid only", err)
	}
}

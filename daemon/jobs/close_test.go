package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/mass-dev/mass/jobkind"
)

// A manager that never started closes at once.
func TestCloseWithoutStart(t *testing.T) {
	e := newEnv(t)
	m, err := NewManager(Options{Store: e.store, Kinds: []jobkind.Kind{WaitKind()}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Close(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close of a manager that was never started hangs")
	}
}

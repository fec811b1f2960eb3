package sandbox

import (
	"context"
	"errors"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

func TestLazyRetriesAFailedOpenAndClosesOnce(t *testing.T) {
	calls := 0
	down := errors.New("engine down")
	l := NewLazy("docker", func(context.Context) (Runtime, error) {
		calls++
		return nil, down
	})
	ctx := context.Background()
	for range 2 {
		if _, err := l.List(ctx, ""); !errors.Is(err, down) {
			t.Fatalf("List = %v, want the open error", err)
		}
	}
	if calls != 2 {
		t.Errorf("open called %d times, want 2 (a failure is retried)", calls)
	}
	if l.Name() != "docker" {
		t.Errorf("Name = %q", l.Name())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Get(ctx); !errors.Is(err, errclass.ErrClosed) {
		t.Errorf("Get after Close = %v, want ErrClosed", err)
	}
	if calls != 2 {
		t.Errorf("open called after Close")
	}
}

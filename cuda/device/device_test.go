//go:build masscuda || masscudaemu

package device

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

// TestOpenDoClose opens the device, runs work from many goroutines and checks that every
// function ran on the owner thread one at a time, with the Exec Open reported. Run with
// -race: Open once read the Exec before the owner thread had stored it.
func TestOpenDoClose(t *testing.T) {
	d, err := Open(0, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if d.Info().Name == "" || d.Info().TotalMem <= 0 {
		t.Fatalf("info not filled: %+v", d.Info())
	}
	var inside, ran atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := d.Do(func(x *Exec) error {
				if x == nil {
					t.Error("Do got a nil Exec")
				}
				if inside.Add(1) != 1 {
					t.Error("two functions ran at once")
				}
				ran.Add(1)
				inside.Add(-1)
				return nil
			})
			if err != nil {
				t.Errorf("do: %v", err)
			}
		}()
	}
	wg.Wait()
	if ran.Load() != 16 {
		t.Fatalf("ran %d functions, want 16", ran.Load())
	}
	if err := d.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := d.Do(func(*Exec) error { return nil }); !errors.Is(err, ErrClosed) || !errors.Is(err, errclass.ErrClosed) {
		t.Fatalf("Do after Close = %v, want ErrClosed (class errclass.ErrClosed)", err)
	}
}

func TestOpenBadOrdinal(t *testing.T) {
	if _, err := Open(1<<20, nil); !errors.Is(err, ErrNoDevice) || !errors.Is(err, errclass.ErrNotFound) {
		t.Fatalf("opening a device that does not exist = %v, want ErrNoDevice (class errclass.ErrNotFound)", err)
	}
}

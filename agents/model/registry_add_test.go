package model

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// A generation adds its model while jobs look models up (run with -race).
func TestRegistryAddWhileReading(t *testing.T) {
	r := NewRegistry(nil, nil)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 200 {
			r.Add(fmt.Sprintf("gen-%d", i), nil, false)
		}
	}()
	go func() {
		defer wg.Done()
		for i := range 200 {
			_, _ = r.Client(fmt.Sprintf("gen-%d", i))
			_ = r.Has("gen-1") && r.DryRun("gen-1")
			_ = r.Names()
		}
	}()
	wg.Wait()
	if !r.Has("gen-199") || len(r.Names()) != 200 {
		t.Errorf("registry holds %d models", len(r.Names()))
	}
}

// A removed generation's model is gone: not listed, not callable (the
// error names it as unknown), and removing it again does nothing.
func TestRegistryRemove(t *testing.T) {
	r := NewRegistry(nil, nil)
	r.Add("gen-1", nil, true)
	r.Add("gen-2", nil, false)
	r.Remove("gen-1")
	r.Remove("gen-1")
	if r.Has("gen-1") || r.DryRun("gen-1") || len(r.Names()) != 1 {
		t.Errorf("after removal: has %v names %v", r.Has("gen-1"), r.Names())
	}
	if _, err := r.Client("gen-1"); err == nil || !strings.Contains(err.Error(), `no model named "gen-1"`) {
		t.Errorf("call naming a removed model: %v", err)
	}
	if _, err := r.Client("gen-2"); err != nil {
		t.Errorf("gen-2: %v", err)
	}
}

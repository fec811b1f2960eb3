package model

import (
	"fmt"
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

package sft

import (
	"math"
	"testing"
)

func TestSamplerDistribution(t *testing.T) {
	var rows []Row
	one := []bool{true}
	// Task a: 1 orchestrator window, 4 worker windows. Task b: only workers. Task c: only orchestrator.
	rows = append(rows, mkRow("a", RoleOrchestrator, "orchestrator", []int32{1}, one))
	for i := 0; i < 4; i++ {
		rows = append(rows, mkRow("a", RoleWorker, "worker-1", []int32{2}, one))
	}
	rows = append(rows, mkRow("b", RoleWorker, "worker-1", []int32{3}, one))
	rows = append(rows, mkRow("b", RoleAuxiliary, "judge", []int32{4}, one))
	rows = append(rows, mkRow("c", RoleOrchestrator, "orchestrator", []int32{5}, one))

	s := NewSampler(rows, 42)
	const n = 90000
	count := map[int32]int{}
	for i := 0; i < n; i++ {
		r := s.Next()
		count[r.InputIDs[0]]++
	}
	want := map[int32]float64{
		1: 1.0 / 3 * 1.0 / 3,               // task a, orchestrator
		2: 1.0 / 3 * 2.0 / 3,               // task a, workers
		3: 1.0 / 3 * 0.5, 4: 1.0 / 3 * 0.5, // task b, falls back to its only group
		5: 1.0 / 3, // task c
	}
	for id, p := range want {
		got := float64(count[id]) / n
		if math.Abs(got-p) > 0.01 {
			t.Errorf("token %d: got frequency %.4f, want %.4f", id, got, p)
		}
	}
	if got, want := s.Drawn(), int64(n); got != want {
		t.Errorf("drawn: got %d, want %d", got, want)
	}
	if got, want := s.ProcessedTokens(), int64(n); got != want {
		t.Errorf("processed: got %d, want %d", got, want)
	}
}

func TestSamplerSeeded(t *testing.T) {
	var rows []Row
	for i := int32(0); i < 20; i++ {
		rows = append(rows, mkRow(string(rune('a'+i%3)), RoleWorker, "w", []int32{i}, []bool{true}))
	}
	a, b := NewSampler(rows, 7), NewSampler(rows, 7)
	for i := 0; i < 100; i++ {
		if got, want := a.Next().InputIDs[0], b.Next().InputIDs[0]; got != want {
			t.Fatalf("draw %d: got %d, want %d", i, got, want)
		}
	}
}

func TestSamplerAdvance(t *testing.T) {
	var rows []Row
	for i := int32(0); i < 10; i++ {
		rows = append(rows, mkRow(string(rune('a'+i%4)), RoleWorker, "w", []int32{i, i}, []bool{true, i%2 == 0}))
	}
	a, b := NewSampler(rows, 3), NewSampler(rows, 3)
	for i := 0; i < 17; i++ {
		a.Next()
	}
	b.Advance(17)
	if got, want := b.ProcessedTokens(), a.ProcessedTokens(); got != want {
		t.Errorf("processed: got %d, want %d", got, want)
	}
	for i := 0; i < 20; i++ {
		if got, want := b.Next().InputIDs[0], a.Next().InputIDs[0]; got != want {
			t.Fatalf("draw %d after resume: got %d, want %d", i, got, want)
		}
	}
}

package generation

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestSplitGuardAtSubmission: a held-out or excluded task is refused by
// both kinds' Validate (the 400 at POST /v1/jobs), naming task and split.
func TestSplitGuardAtSubmission(t *testing.T) {
	w := &world{root: t.TempDir()}
	for _, k := range []struct {
		name  string
		extra string
		v     func(json.RawMessage) error
	}{{"generation", "", NewKind(w).Validate}, {"cycle", `,"generations":2`, NewCycleKind(w).Validate}} {
		for task, split := range map[string]string{"test-q": "test", "excluded-q": "excluded"} {
			err := k.v(json.RawMessage(`{"tasks":["alpha","` + task + `"]` + k.extra + `}`))
			if err == nil || !strings.Contains(err.Error(), "task "+task) || !strings.Contains(err.Error(), `"`+split+`"`) {
				t.Errorf("%s with %s: %v, want a refusal naming the task and split %q", k.name, task, err, split)
			}
		}
		if err := k.v(json.RawMessage(`{"tasks":["alpha","beta"]` + k.extra + `}`)); err != nil {
			t.Errorf("%s with train tasks: %v", k.name, err)
		}
		if err := k.v(json.RawMessage(`{"tasks":["ghost"]` + k.extra + `}`)); err == nil || !strings.Contains(err.Error(), "ghost") {
			t.Errorf("%s with an unknown task: %v", k.name, err)
		}
	}
}

// TestSplitGuardAtEligible: a spec that became held-out after submission
// is refused by stage eligible; nothing is collected.
func TestSplitGuardAtEligible(t *testing.T) {
	w := &world{root: t.TempDir()}
	cfg := w.config("alpha", "test-q")
	cfg.Splits = w
	_, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrSplit) || !strings.Contains(err.Error(), "stage eligible") || !strings.Contains(err.Error(), "test-q") {
		t.Fatalf("run with a held-out task: %v", err)
	}
	for _, c := range w.calls() {
		if strings.HasPrefix(c, "episode") {
			t.Fatalf("an episode ran: %s", c)
		}
	}
	rep := &reporter{}
	j := job(w.root, CycleKindName, CycleParams{GenerationParams: Params{Tasks: []string{"excluded-q"}}, Generations: 1})
	if err := NewCycleKind(w).Run(context.Background(), j, rep); !errors.Is(err, ErrSplit) {
		t.Errorf("cycle run with an excluded task: %v", err)
	}
}

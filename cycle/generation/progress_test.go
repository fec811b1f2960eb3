package generation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestProgressNumbers: each stage reports the numbers that matter as it
// goes: collect eligible/needed and runs, rank judgments done of the
// ring's, train step, loss, val loss and ETA read from the trainer's
// metrics.jsonl while it runs.
func TestProgressNumbers(t *testing.T) {
	w := &world{root: t.TempDir(), failEvery: map[string]int64{"beta": 3}, metrics: 12, trainFor: 3 * time.Second}
	cfg := w.config("beta")
	var mu sync.Mutex
	var got []Progress
	cfg.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
	}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	msgs := map[string][]string{}
	var lastCollect Progress
	for _, p := range got {
		msgs[p.Stage] = append(msgs[p.Stage], p.Message())
		if p.Stage == "collect" && p.Counters != nil {
			lastCollect = p
		}
	}
	has := func(stage string, parts ...string) {
		t.Helper()
		for _, m := range msgs[stage] {
			if all(m, parts) {
				return
			}
		}
		t.Errorf("no %s progress with %q among %q", stage, parts, msgs[stage])
	}
	has("collect", "beta", "eligible 0/6", "runs 0/8", "failed 0")
	has("collect", "eligible 6/6")
	has("rank", "beta", "judgments 0/12", "invalid 0")
	has("rank", "judgments 12/12")
	// A step mid-run (the poll samples the log, so not every step shows).
	mid := false
	for _, m := range msgs["train"] {
		var step int
		if _, err := fmt.Sscanf(m, "step %d/12", &step); err == nil && step < 12 &&
			all(m, []string{fmt.Sprintf("loss %.4f", 3.0/float64(step)), fmt.Sprintf("ETA %ds", 12-step), "tok/s 1500"}) {
			mid = true
		}
	}
	if !mid {
		t.Errorf("no train progress mid-run among %q", msgs["train"])
	}
	has("train", "step 12/12", "val loss 1.7500")
	has("export", "merging the adapter")
	c := lastCollect.Counters
	if c["eligible"] < 6 || c["needed"] != 6 || c["runs"] != c["eligible"]+c["failed"] || c["failed"] == 0 {
		t.Errorf("collect counters %v", c)
	}
	var stages []string
	for _, p := range got {
		if len(stages) == 0 || stages[len(stages)-1] != p.Stage {
			stages = append(stages, p.Stage)
		}
	}
	if !slices.Equal(stages, Stages) {
		t.Errorf("stages reported %v, want %v", stages, Stages)
	}
}

// TestNoTaskLeftSaysWhy: a generation whose every task was excluded fails
// naming each task and its reason.
func TestNoTaskLeftSaysWhy(t *testing.T) {
	w := &world{root: t.TempDir(), failEvery: map[string]int64{"gamma": 1}}
	_, err := Run(context.Background(), w.config("gamma", "lost-1"))
	if err == nil || !all(err.Error(), []string{"no task left to train on (2 excluded)", "gamma: stopped early: 0 of", "lost-1: its search never beat"}) {
		t.Fatalf("err = %v", err)
	}
}

func all(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

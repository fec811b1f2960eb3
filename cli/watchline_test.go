package cli

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/daemon/api"
)

func trainJob() api.Job {
	start := time.Now().Add(-95 * time.Second)
	return api.Job{ID: "j-mabc123-0a1b2c", State: api.StateRunning, Started: &start, Attempt: 1,
		Progress: &api.Progress{Stage: "train",
			Message:  "step 37/200  loss 1.2345  lr 0.0002  tok/s 1534  sup_tok 123456  ETA 6m12s",
			Counters: map[string]int64{"step": 37, "steps": 200, "processed_supervised_tokens": 123456}}}
}

func TestFitLineKeepsLossAndETA(t *testing.T) {
	for _, width := range []int{40, 79, 119, 200} {
		line := fitLine(statusSegments(trainJob(), "step"), width)
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("width %d: line has %d runes: %q", width, n, line)
		}
		if width >= 79 {
			for _, want := range []string{"running", "train", "step 37/200", "loss 1.2345", "ETA 6m12s"} {
				if !strings.Contains(line, want) {
					t.Errorf("width %d: %q lost %q", width, line, want)
				}
			}
		}
		if strings.Contains(line, "_") {
			t.Errorf("width %d: raw counter key in %q", width, line)
		}
	}
}

func TestHumanCounters(t *testing.T) {
	got := strings.Join(console.Counters(map[string]int64{"tick": 3, "ticks": 10, "tool_calls": 4, "running_agents": 2}), ", ")
	if want := "running 2, tick 3/10, tool calls 4"; got != want {
		t.Errorf("humanCounters = %q, want %q", got, want)
	}
}

func TestFitLineInertText(t *testing.T) {
	j := trainJob()
	j.Progress.Message = "evil\x1b[2J\r\nline"
	if line := fitLine(statusSegments(j, ""), 200); strings.ContainsAny(line, "\x1b\r\n") {
		t.Errorf("control characters kept: %q", line)
	}
}

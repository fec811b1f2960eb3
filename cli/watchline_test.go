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

// TestFitLineGenerationStages: at 80 columns a generation's status line
// keeps its stage and the stage's key number (messages as
// cycle/generation writes them).
func TestFitLineGenerationStages(t *testing.T) {
	start := time.Now().Add(-321 * time.Second)
	for _, c := range []struct {
		stage, msg string
		counters   map[string]int64
		want       []string
	}{
		{"collect", "sales-analysis-with-a-long-name  eligible 5/16  runs 7/18  failed 2",
			map[string]int64{"stage": 2, "stages": 8, "eligible": 5, "needed": 16, "runs": 7, "planned_runs": 18, "failed": 2},
			[]string{"running", "collect", "eligible 5/16", "runs 7/18"}},
		{"rank", "sales-analysis  judgments 12/54  invalid 1",
			map[string]int64{"stage": 3, "stages": 8, "judgment": 12, "judgments": 54, "invalid": 1},
			[]string{"running", "rank", "judgments 12/54"}},
		{"train", "step 130/1624  loss 1.2345  val loss 1.3456  ETA 3h12m5s  tok/s 1534",
			map[string]int64{"stage": 6, "stages": 8, "step": 130, "steps": 1624, "processed_supervised_tokens": 99999},
			[]string{"running", "train", "step 130/1624", "loss 1.2345", "val loss 1.3456", "ETA 3h12m5s"}},
	} {
		j := api.Job{ID: "j-mabc123-0a1b2c", State: api.StateRunning, Started: &start, Attempt: 1,
			Progress: &api.Progress{Stage: c.stage, Message: c.msg, Counters: c.counters}}
		line := fitLine(statusSegments(j, "generation_stage"), 80)
		if n := utf8.RuneCountInString(line); n > 80 {
			t.Errorf("%s: %d columns: %q", c.stage, n, line)
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q lost %q", c.stage, line, w)
			}
		}
		t.Logf("%s", line)
	}
}

// TestWatchLineSaysEachNumberOnce: a search's structured message is not
// followed by its counters again at any width (it read "iteration 0/3 ·
// … · iteration 0/3, champion v0").
func TestWatchLineSaysEachNumberOnce(t *testing.T) {
	start := time.Now().Add(-30 * time.Second)
	j := api.Job{ID: "j-mabc123-0a1b2c", State: api.StateRunning, Started: &start, Attempt: 1,
		Progress: &api.Progress{Stage: "judging v2_vs_no_harness", Message: "iteration 2/3  champion v1  champion vs reference 1-0  tokens 48120",
			Counters: map[string]int64{"iteration": 2, "iterations": 3, "champion_version": 1, "ref_wins": 1, "ref_losses": 0, "tokens": 48120}}}
	line := fitLine(statusSegments(j, "search_stage"), 300)
	for _, w := range []string{"iteration", "champion v1", "tokens", "reference"} {
		if n := strings.Count(line, w); n != 1 {
			t.Errorf("%q appears %d times in %q", w, n, line)
		}
	}
	if strings.Contains(line, "ref wins") || strings.Contains(line, "champion version") {
		t.Errorf("counters repeat the message: %q", line)
	}
}

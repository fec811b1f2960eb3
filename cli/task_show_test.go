package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// `task show` left out hidden_paths, grader and domain, printed "agent wall
// 0s" for an unset limit and the memory in raw bytes.
func TestPrintTaskComplete(t *testing.T) {
	var b strings.Builder
	printTask(&b, api.Task{ID: "t", Spec: taskspec.Spec{ID: "t", Prompt: "p", Domain: "orbital mechanics",
		HiddenPaths: []taskspec.Input{{Path: "labels.csv", Dest: "tests/labels.csv"}},
		Grader:      &taskspec.Grader{Command: "python3 /workspace/tests/grade.py"},
		Limits:      taskspec.Limits{EpisodeWallTime: 15 * time.Minute, AgentTurns: 40, CPUs: 2, MemoryBytes: 2 << 30}}})
	out := b.String()
	for _, want := range []string{"domain:      orbital mechanics", "hidden:      labels.csv -> tests/labels.csv",
		"grader:      python3 /workspace/tests/grade.py (timeout ", "agent wall none (the episode clock only)", "memory 2.0 GiB",
		"split:       train (default)", "network:     none"} {
		if !strings.Contains(out, want) {
			t.Errorf("task show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "agent wall 0s") || strings.Contains(out, "bytes") {
		t.Errorf("unformatted values:\n%s", out)
	}
}

func TestFmtBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "unset", 512: "512 B", 1536: "1.5 KiB", 1 << 20: "1.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := fmtBytes(n); got != want {
			t.Errorf("fmtBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

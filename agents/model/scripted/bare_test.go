package scripted

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// TestBareSolverOfLaterGeneration: on a bare task prompt the base model's
// solver writes only the deliverables, a later generation's solver also
// its checks (what the evaluation's judges see as the difference).
func TestBareSolverOfLaterGeneration(t *testing.T) {
	checks := func(modelID string) int {
		seed := 3
		n := 0
		for _, c := range workerWrites(&fakeopenai.Request{Model: modelID, Seed: &seed}, assignment{agent: "solver", recipe: "projectile-sim", index: 1, of: 1}, nil) {
			if strings.Contains(c.Arguments, "/workspace/dryrun/checks/") {
				n++
			}
		}
		return n
	}
	if got := checks(ModelID); got != 0 {
		t.Errorf("base solver wrote %d check files, want 0", got)
	}
	if got := checks(ModelID + "-gen-1"); got != 1 {
		t.Errorf("gen-1 solver wrote %d check files, want 1", got)
	}
}

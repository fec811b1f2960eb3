package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectModelDevicePlan: inspect-model --device-gb prints the plan of the paper's
// Qwen3.6-27B (config only) at 49,152 tokens and the devices it needs on 80 and 141 GB.
func TestInspectModelDevicePlan(t *testing.T) {
	dir := filepath.Join("..", "model", "testdata", "qwen3.6-27b")
	out, _ := mustRun(t, "inspect-model", "--model", dir, "--device-gb", "80,141", "--replicas", "3")
	for _, want := range []string{
		"80 GB device: needs 2 device(s) per replica (--devices 0,1), 6 for --replicas 3",
		"141 GB device: needs 1 device(s) per replica (--devices 0), 3 for --replicas 3",
		"window 49152 tokens, LoRA r64 on 10 targets",
		"stage 1: layers 32-63 +lm_head",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := runApp("inspect-model", "--model", dir, "--device-gb", "8"); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("8 GB devices: %v, want a refusal", err)
	}
	if _, _, err := runApp("inspect-model", "--model", dir, "--device-gb", "eighty"); err == nil || !strings.Contains(err.Error(), "--device-gb") {
		t.Errorf("bad --device-gb: %v", err)
	}
}

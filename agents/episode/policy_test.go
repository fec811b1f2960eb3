package episode

import (
	"testing"

	"github.com/mass-dev/mass/taskspec"
)

// The task's limits.gpus reaches the box policy; a task without it asks for none.
func TestPolicyGPUs(t *testing.T) {
	for _, n := range []int{0, 2} {
		e := &run{opts: Options{Task: &taskspec.Spec{Limits: taskspec.Limits{GPUs: n, CPUs: 1.5}}}}
		p := e.policy()
		if p.GPUs != n || p.NanoCPUs != 1_500_000_000 {
			t.Errorf("gpus %d: policy has gpus %d nano_cpus %d", n, p.GPUs, p.NanoCPUs)
		}
	}
}

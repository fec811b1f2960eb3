package console

import (
	"testing"

	"github.com/mass-dev/mass/daemon/api"
)

func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		p    *api.Progress
		want string
	}{
		{nil, ""},
		{&api.Progress{Stage: "collect", Message: "log-counts  eligible 5/16  runs 7/18  failed 2",
			Counters: map[string]int64{"stage": 2, "stages": 8, "eligible": 5, "needed": 16, "runs": 7, "planned_runs": 18, "failed": 2}},
			"collect · log-counts · eligible 5/16 · runs 7/18 · failed 2 · stage 2/8"},
		{&api.Progress{Stage: "waiting", Message: "tick 3", Counters: map[string]int64{"tick": 3, "ticks": 10}},
			"waiting · tick 3 · tick 3/10"},
		{&api.Progress{Stage: "running", Counters: map[string]int64{"tool_calls": 4, "running_agents": 2}},
			"running · running 2 · tool calls 4"},
	} {
		if got := ProgressText(c.p); got != c.want {
			t.Errorf("ProgressText(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

package episode

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// is_background in an episode: the orchestrator's background writer keeps
// running across its own later calls, is frozen while its sub-agent works
// (the worker sees bg.log stand still), and is gone with its sandbox.
func TestBackgroundShell(t *testing.T) {
	shell := func(cmd string, bg bool) fakeopenai.Call {
		b, _ := json.Marshal(map[string]any{"command": cmd, "is_background": bg})
		return fakeopenai.Call{Name: "run_shell_command", Arguments: string(b)}
	}
	const measure = `a=$(wc -c < /workspace/bg.log); sleep 0.6; b=$(wc -c < /workspace/bg.log); echo "sizes $a $b"`
	var mu sync.Mutex
	outs := map[string]string{}
	p := func(r *fakeopenai.Request) fakeopenai.Reply {
		last, _ := r.LastTool()
		who := "worker"
		if r.HasTool("agent") {
			who = "orchestrator"
		}
		mu.Lock()
		outs[who+strconv.Itoa(r.Turn())] = last
		mu.Unlock()
		switch {
		case who == "worker" && r.Turn() == 0:
			return fakeopenai.Reply{Calls: []fakeopenai.Call{shell(measure, false)}}
		case who == "worker":
			return fakeopenai.Reply{Content: "measured"}
		}
		switch r.Turn() {
		case 0:
			return fakeopenai.Reply{Calls: []fakeopenai.Call{shell(`while :; do echo tick >> /workspace/bg.log; sleep 0.05; done`, true)}}
		case 1:
			return fakeopenai.Reply{Calls: []fakeopenai.Call{shell(measure, false)}}
		case 2:
			return fakeopenai.Reply{Calls: []fakeopenai.Call{{Name: "agent", Arguments: `{"description":"measure","prompt":"measure bg.log"}`}}}
		}
		return fakeopenai.Reply{Content: "done"}
	}
	d, _ := fakeModel(t, p, nil)
	st, _ := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s)", st.Failure, st.Reason)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(outs["orchestrator1"], "Started in the background") {
		t.Fatalf("background call answered %q", outs["orchestrator1"])
	}
	grows := func(out string) (bool, bool) {
		var a, b int
		i := strings.LastIndex(out, "sizes ")
		if i < 0 {
			return false, false
		}
		if _, err := fmtSscan(out[i:], &a, &b); err != nil {
			return false, false
		}
		return b > a, true
	}
	if g, ok := grows(outs["orchestrator2"]); !ok || !g {
		t.Errorf("the orchestrator's background writer did not run across its next call: %q", outs["orchestrator2"])
	}
	if g, ok := grows(outs["worker1"]); !ok || g {
		t.Errorf("the orchestrator's background writer ran while its worker worked: %q", outs["worker1"])
	}
	if left := leftovers(t, st.EpisodeID); len(left) != 0 {
		t.Errorf("episode left %d containers or volumes", len(left))
	}
}

func fmtSscan(s string, a, b *int) (int, error) { return fmt.Sscanf(s, "sizes %d %d", a, b) }

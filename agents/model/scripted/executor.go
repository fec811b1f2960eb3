package scripted

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// workflowHeader starts a workflow in a teacher prompt (cycle/workflow.Header).
const workflowHeader = "Create an agent team with following agent candidates to solve this problem:"

// teamMarker starts the assignment of a worker that plays a workflow agent.
const teamMarker = "DRY-RUN TEAM"

// FailEvery makes one seed in FailEvery leave out the recipe's FailSkip
// deliverable (seed % FailEvery == FailEvery-1), so that the grader fails
// and success filters see failures; 0 disables it.
var FailEvery = 10

type teamAgent struct {
	AgentID     string `json:"agent_id"`
	Role        string `json:"role"`
	Instruction string `json:"instruction"`
}

// workflowAgents reads the team from a teacher prompt; nil when there is none.
func workflowAgents(prompt string) []teamAgent {
	_, rest, ok := strings.Cut(prompt, workflowHeader)
	if !ok {
		return nil
	}
	rest = strings.TrimSpace(rest)
	var agents []teamAgent
	if err := json.NewDecoder(strings.NewReader(rest)).Decode(&agents); err != nil {
		return nil
	}
	return agents
}

// teamOrchestrator delegates to one worker per workflow agent, in order,
// then reports. Worker 1 writes the recipe's deliverables; every worker
// writes its own contract check, so a larger team leaves more evidence.
// Consecutive contract checkers (ids "checker-N", independent of each
// other) are delegated together, several agent calls in one message.
func teamOrchestrator(r *fakeopenai.Request, agents []teamAgent, tasks Tasks) fakeopenai.Reply {
	done := 0 // agent calls answered so far: one tool message each
	for _, m := range r.Messages {
		if m.Role == "tool" {
			done++
		}
	}
	rc := recipeFor(tasks, r.FirstUser())
	id := "none"
	if rc != nil {
		id = rc.TaskID
	}
	if done >= len(agents) {
		return fakeopenai.Reply{Reasoning: Label + " Every workflow agent reported.",
			Content: fmt.Sprintf("%s Done: %d workflow agents ran as delegated workers. This was a scripted dry run, not a real model.", Label, len(agents))}
	}
	end := done + 1
	for end < len(agents) && isChecker(agents[done]) && isChecker(agents[end]) {
		end++
	}
	var calls []fakeopenai.Call
	for i := done; i < end; i++ {
		a := agents[i]
		prompt := fmt.Sprintf("%s agent=%s index=%d of=%d recipe=%s\nYou are %s (%s). %s\nWorking directory: /workspace. Verify what you write with ls before you report.",
			teamMarker, a.AgentID, i+1, len(agents), id, a.AgentID, a.Role, a.Instruction)
		b, _ := json.Marshal(map[string]any{"description": a.AgentID + ": " + a.Role, "prompt": prompt, "subagent_type": "general-purpose"})
		calls = append(calls, fakeopenai.Call{Name: "agent", Arguments: string(b)})
	}
	return fakeopenai.Reply{Reasoning: fmt.Sprintf("%s Stage %d-%d of %d: delegate.", Label, done+1, end, len(agents)), Calls: calls}
}

func isChecker(a teamAgent) bool { return strings.HasPrefix(a.AgentID, "checker-") }

// bareRecipe is the bare-task orchestrator of an example with a recipe:
// one worker writes the deliverables (no contract checks) and the dry-run
// Python file, a second reads and runs that file (one code handoff).
func bareRecipe(turn int, rc *Recipe) fakeopenai.Reply {
	switch turn {
	case 0:
		prompt := fmt.Sprintf("%s agent=solver index=1 of=1 recipe=%s\nSolve the task: write every deliverable under /workspace.", teamMarker, rc.TaskID)
		return call(Label+" Delegate the whole task to one worker.", "agent",
			map[string]any{"description": "solve the task", "prompt": prompt, "subagent_type": "general-purpose"})
	case 1:
		return orchestrator(1) // the reader step of the plain dry run
	}
	return fakeopenai.Reply{Reasoning: Label + " Both workers reported.", Content: Label + " Done: worker-1 wrote the deliverables and " + PythonFile +
		", worker-2 read and ran it. This was a scripted dry run, not a real model."}
}

type assignment struct {
	agent, recipe string
	index, of     int
}

func parseAssignment(s string) (assignment, bool) {
	line, _, _ := strings.Cut(s, "\n")
	if !strings.HasPrefix(line, teamMarker) {
		return assignment{}, false
	}
	var a assignment
	for _, f := range strings.Fields(line)[2:] {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "agent":
			a.agent = v
		case "recipe":
			a.recipe = v
		case "index":
			a.index, _ = strconv.Atoi(v)
		case "of":
			a.of, _ = strconv.Atoi(v)
		}
	}
	return a, a.agent != ""
}

// seedOf is the request's sampling seed (0 when none was sent).
func seedOf(r *fakeopenai.Request) int {
	if r.Seed == nil {
		return 0
	}
	return *r.Seed
}

// Quality is the per-model-name offset: models whose id names a later
// generation ("gen-1", "gen-2") write that many extra checks per worker.
func Quality(modelID string) int {
	_, g, ok := strings.Cut(modelID, "gen-")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimLeft(g, "-"))
	return n
}

// seedChecks are the secondary checks a worker adds as its seed's quality rises.
var seedChecks = [...]string{"re-derived one reported number from the inputs", "cross-checked the totals against the breakdowns"}

// SeedQuality is the secondary quality a request seed gives a team episode
// (seed mod 3, so 0, 1 or 2): each workflow worker writes that many extra
// passing "secondary check" lines into its /workspace/dryrun/checks file,
// which the export carries and the evidence bundle shows; the grader never
// reads them, and the evaluator weighs them only between otherwise equal
// workspaces (so a better design still beats a luckier seed).
func SeedQuality(seed int) int {
	return ((seed % 3) + 3) % 3
}

// teamWorker plays one workflow agent: turn 0 writes its files in one
// message (several tool calls), turn 1 verifies, turn 2 reports. The
// second agent first reads the first one's Python file (a code handoff).
func teamWorker(r *fakeopenai.Request, a assignment, tasks Tasks) fakeopenai.Reply {
	turn := r.Turn()
	if a.index == 2 {
		if turn == 0 {
			return call(Label+" Read the first agent's code before I build on it.", "read_file", map[string]any{"file_path": PythonFile})
		}
		turn--
	}
	switch turn {
	case 0:
		return fakeopenai.Reply{Reasoning: Label + " Write my contract's files.", Calls: workerWrites(r, a, tasks)}
	case 1:
		cmd := "ls -l /workspace /workspace/dryrun/checks"
		if rc := recipeOf(tasks, a.recipe); rc != nil && a.index == 1 && rc.Verify != "" {
			cmd = rc.Verify + "; ls -l /workspace/dryrun/checks"
		}
		return call(Label+" Verify what I wrote.", "run_shell_command", map[string]any{"command": cmd + " || true", "description": "verify deliverables"})
	}
	return fakeopenai.Reply{Reasoning: Label + " Verified.", Content: fmt.Sprintf("%s %s finished its contract (agent %d of %d).", Label, a.agent, a.index, a.of)}
}

func workerWrites(r *fakeopenai.Request, a assignment, tasks Tasks) []fakeopenai.Call {
	seed := seedOf(r)
	var calls []fakeopenai.Call
	write := func(p, content string) {
		b, _ := json.Marshal(map[string]any{"file_path": p, "content": content})
		calls = append(calls, fakeopenai.Call{Name: "write_file", Arguments: string(b)})
	}
	rc := recipeOf(tasks, a.recipe)
	if a.index == 1 {
		write(PythonFile, pythonSource)
	}
	if a.index == 1 && rc != nil {
		fail := FailEvery > 0 && seed%FailEvery == FailEvery-1
		for _, name := range rc.deliverables() {
			if fail && name == rc.FailSkip {
				continue // this seed's run misses a graded deliverable
			}
			write("/workspace/"+name, rc.Files[name])
		}
	}
	if a.of == 1 && a.agent == "solver" && Quality(r.Model) == 0 {
		return calls // the base model's bare-task solver checks nothing
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s contract checks %s\n\n", a.agent, Label)
	fmt.Fprintf(&b, "Check: %s contract verified: pass\n", a.agent)
	for i := 0; i < Quality(r.Model); i++ {
		fmt.Fprintf(&b, "Check: %s extra check %d: pass\n", a.agent, i+1)
	}
	for i, what := range seedChecks[:SeedQuality(seed)] {
		fmt.Fprintf(&b, "Check: %s secondary check %d (%s): pass\n", a.agent, i+1, what)
	}
	write("/workspace/dryrun/checks/"+a.agent+".md", b.String())
	return calls
}

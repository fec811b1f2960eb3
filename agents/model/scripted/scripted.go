// Package scripted is massd's built-in offline model: a deterministic
// dry-run policy served as an OpenAI-compatible endpoint on loopback, so
// that episodes run offline through the real client path. Everything it
// says is marked "[dry-run]".
package scripted

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// Name is the model name massd offers for the dry-run policy.
const Name = "scripted"

// ModelID is the model id the endpoint reports.
const ModelID = "mass-scripted-dry-run"

// Label marks every text the policy produces.
const Label = "[dry-run]"

// Files the dry run writes, below /workspace.
const (
	Dir        = "/workspace/dryrun"
	PythonFile = Dir + "/hello.py"
)

// Markers in worker prompts that select the worker's script.
const (
	writerMarker = "DRY-RUN STEP 1"
	readerMarker = "DRY-RUN STEP 2"
)

const pythonSource = `"""Dry-run artifact written by the scripted model's first worker."""


def greet(name):
    return "hello from " + name


if __name__ == "__main__":
    print(greet("the mass dry run"))
`

// Policy is the dry-run policy: the orchestrator delegates to two workers;
// the first writes a Python file, the second reads it with read_file and
// runs it; then the orchestrator reports. It keys only on the conversation
// (offered tools, turn number, assignment marker), so it is deterministic
// and needs no state between requests.
func Policy(r *fakeopenai.Request) fakeopenai.Reply { return serve(r, nil) }

// PolicyWith is Policy that also knows the stored tasks: a task's own
// recipe, read at run time, or else its required outputs, which the
// workers write as labelled dry-run files so that any task runs end to end.
func PolicyWith(tasks Tasks) fakeopenai.Policy {
	return func(r *fakeopenai.Request) fakeopenai.Reply { return serve(r, tasks) }
}

func serve(r *fakeopenai.Request, tasks Tasks) fakeopenai.Reply {
	turn := r.Turn()
	first := r.FirstUser()
	switch {
	case isCompression(r):
		return compress(r)
	case strings.Contains(first, AgentEvaluatorMarker) && r.HasTool("run_shell_command"):
		return agentEvaluate(r)
	case strings.Contains(first, EvaluatorMarker):
		return evaluate(r)
	case strings.HasPrefix(system(r), OptimizerMarker) || strings.Contains(first, OptimizerMarker):
		return optimize(r)
	case r.HasTool("agent"):
		if agents := workflowAgents(first); len(agents) > 0 {
			return foreground(first, teamOrchestrator(r, agents, tasks))
		}
		if rc := recipeFor(tasks, first); rc != nil {
			return foreground(first, bareRecipe(turn, rc))
		}
		return foreground(first, orchestrator(turn))
	case strings.HasPrefix(first, teamMarker):
		if a, ok := parseAssignment(first); ok {
			return teamWorker(r, a, tasks)
		}
	case strings.Contains(r.FirstUser(), writerMarker):
		return writer(turn)
	case strings.Contains(r.FirstUser(), readerMarker):
		return reader(turn)
	}
	return fakeopenai.Reply{Reasoning: Label + " unknown assignment", Content: Label + " I was not given a dry-run assignment; nothing to do."}
}

func orchestrator(turn int) fakeopenai.Reply {
	switch turn {
	case 0:
		return call(Label+" Plan: delegate writing a Python file to a first worker.", "agent", map[string]any{
			"description":   "write python file",
			"prompt":        fmt.Sprintf("%s: write the Python file %s that prints a greeting, check it exists with ls, then report.", writerMarker, PythonFile),
			"subagent_type": "general-purpose",
		})
	case 1:
		return call(Label+" The first worker finished; delegate reading and running its file.", "agent", map[string]any{
			"description":   "read and run file",
			"prompt":        fmt.Sprintf("%s: read %s with read_file, run it with python3, then report what it printed.", readerMarker, PythonFile),
			"subagent_type": "general-purpose",
		})
	}
	return fakeopenai.Reply{Reasoning: Label + " Both workers reported.",
		Content: Label + " Done: worker-1 wrote " + PythonFile + " and worker-2 read and ran it. This was a scripted dry run, not a real model."}
}

func writer(turn int) fakeopenai.Reply {
	switch turn {
	case 0:
		return call(Label+" Write the file.", "write_file", map[string]any{"file_path": PythonFile, "content": pythonSource})
	case 1:
		return call(Label+" Verify it exists.", "run_shell_command", map[string]any{"command": "ls -l " + Dir, "description": "list the dry-run directory"})
	}
	return fakeopenai.Reply{Reasoning: Label + " Verified.", Content: Label + " Wrote " + PythonFile + "; ls shows it."}
}

func reader(turn int) fakeopenai.Reply {
	switch turn {
	case 0:
		return call(Label+" Read the first worker's file.", "read_file", map[string]any{"file_path": PythonFile})
	case 1:
		return call(Label+" Run it.", "run_shell_command", map[string]any{
			"command":     "if command -v python3 >/dev/null; then python3 " + PythonFile + "; else echo 'python3 is not installed in this sandbox image'; fi",
			"description": "run the dry-run file"})
	}
	return fakeopenai.Reply{Reasoning: Label + " Ran it.", Content: Label + " Read and ran " + PythonFile + "."}
}

// foregroundRule is how an execution directive (the reference's
// teacher_directive.txt among them) asks for foreground workers.
const foregroundRule = "run_in_background: false"

// foreground sets run_in_background false on every agent call of rep when
// the teacher prompt asks for it, as a model following the directive does.
func foreground(first string, rep fakeopenai.Reply) fakeopenai.Reply {
	if !strings.Contains(first, foregroundRule) {
		return rep
	}
	for i, c := range rep.Calls {
		if c.Name != "agent" {
			continue
		}
		var args map[string]any
		if json.Unmarshal([]byte(c.Arguments), &args) != nil {
			continue
		}
		args["run_in_background"] = false
		b, _ := json.Marshal(args)
		rep.Calls[i].Arguments = string(b)
	}
	return rep
}

func call(reasoning, name string, args map[string]any) fakeopenai.Reply {
	b, _ := json.Marshal(args)
	return fakeopenai.Reply{Reasoning: reasoning, Calls: []fakeopenai.Call{{Name: name, Arguments: string(b)}}}
}

// Server is the dry-run endpoint on loopback. Any local user can reach a
// loopback port, so it answers only requests that carry its secret, a
// fresh random key per Start that ConfigFor hands to massd's clients.
type Server struct {
	*fakeopenai.Server
	key   string
	tasks atomic.Pointer[Tasks]
}

// SetTasks makes the served policy look stored tasks up in t (massd's
// task store), read on every request; until then only the compiled-in
// example recipes apply.
func (s *Server) SetTasks(t Tasks) { s.tasks.Store(&t) }

func (s *Server) lookup() Tasks {
	if p := s.tasks.Load(); p != nil {
		return *p
	}
	return nil
}

// Start serves the policy on an ephemeral loopback port.
func Start() (*Server, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("scripted model secret: %w", err)
	}
	key := "mass-scripted-" + hex.EncodeToString(b)
	srv := &Server{key: key}
	p := func(r *fakeopenai.Request) fakeopenai.Reply { return serve(r, srv.lookup()) }
	srv.Server = fakeopenai.New(p, fakeopenai.WithModelID(ModelID), fakeopenai.WithoutHistory(), fakeopenai.WithAPIKey(key))
	if err := srv.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return srv, nil
}

// Key is the secret every request to s must carry as its bearer token
// (an api_key_file for a configured model that points at s).
func (s *Server) Key() string { return s.key }

// Config is the model configuration that points at s.
func (s *Server) Config() model.Config { return s.ConfigFor(Name) }

// Gen1Name is a second scripted model name whose executor writes one extra
// passing check per worker (Quality), so two generations differ measurably.
const Gen1Name = "scripted-gen-1"

// JudgeNames are two more scripted model names for an offline
// evaluation's external judges (massd.yaml judges: [{model:
// scripted-judge-1}, …]): the same evaluator, other model names.
var JudgeNames = []string{Name + "-judge-1", Name + "-judge-2"}

// Names are the scripted model names massd offers.
var Names = []string{Name, Gen1Name, JudgeNames[0], JudgeNames[1]}

// IsScripted reports whether a configured model name is a scripted one.
func IsScripted(name string) bool { return name == Name || strings.HasPrefix(name, Name+"-gen-") }

// ConfigFor is the configuration of scripted model name on s; its model id
// carries the name's generation suffix (the per-model-name quality offset).
func (s *Server) ConfigFor(name string) model.Config {
	id := ModelID
	if suffix, ok := strings.CutPrefix(name, Name+"-"); ok {
		id = ModelID + "-" + suffix
	}
	return model.Config{Name: name, BaseURL: s.URL(), Model: id, DryRun: true, MaxConcurrency: 64, Backoff: 50 * time.Millisecond}.WithKey(s.key)
}

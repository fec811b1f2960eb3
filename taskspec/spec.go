// Package taskspec parses and validates MASS task specifications (YAML or
// JSON) with line- and field-precise errors.
package taskspec

import "time"

// FileName is the spec's name inside a task upload and a stored task
// directory (<data-dir>/tasks/<id>/spec.yaml).
const FileName = "spec.yaml"

// Spec is one task.
type Spec struct {
	ID              string   `json:"id" yaml:"id"`
	Prompt          string   `json:"prompt" yaml:"prompt"` // the bare task
	Inputs          []Input  `json:"inputs,omitempty" yaml:"inputs,omitempty"`
	RequiredOutputs []string `json:"required_outputs,omitempty" yaml:"required_outputs,omitempty"` // globs, workspace-relative
	ProtectedPaths  []string `json:"protected_paths,omitempty" yaml:"protected_paths,omitempty"`   // workspace-relative, read-only for agents
	Split           string   `json:"split,omitempty" yaml:"split,omitempty"`                       // "train" (default), "test" or "excluded"
	Limits          Limits   `json:"limits" yaml:"limits"`
	Workflow        string   `json:"workflow,omitempty" yaml:"workflow,omitempty"` // path of the initial workflow file, relative to the spec
	// HiddenPaths are inputs no agent container ever sees: they are left
	// out of the workspace volume and mounted only in the grader's container.
	HiddenPaths []Input `json:"hidden_paths,omitempty" yaml:"hidden_paths,omitempty"`
	// Grader, when set, decides whether the episode passed (see grader.go).
	Grader *Grader `json:"grader,omitempty" yaml:"grader,omitempty"`
	Domain string  `json:"domain,omitempty" yaml:"domain,omitempty"` // optional: the evaluator's persona ("time-series forecasting")
	// Network, when set, lets the agents download from listed domains
	// through the episode's egress proxy (see network.go); nil: no network.
	Network *Network `json:"network,omitempty" yaml:"network,omitempty"`
	// ReferenceID is the task's query number in the reference
	// implementation (query{q}_ourTeam); a search then names its prompts
	// updated_queries/query{q}_ourTeam-v{k}.txt as the reference does.
	ReferenceID string `json:"reference_id,omitempty" yaml:"reference_id,omitempty"`
	// Directive is a file, relative to the spec, whose text replaces mass's
	// execution directive in collection episodes (e.g. the reference's
	// tasks/teacher_directive.txt), verbatim.
	Directive string `json:"directive,omitempty" yaml:"directive,omitempty"`
	// QueryTemplate is a file, relative to the spec, holding the
	// reference's query file (tasks/initial/query{q}_ourTeam.txt): a
	// search runs each design inside its text, split on its two markers.
	QueryTemplate string `json:"query_template,omitempty" yaml:"query_template,omitempty"`
	// Image is the image profile the task's boxes run in ("base", the
	// default, or "research", or a profile built from a file); see
	// sandbox.ProfileImage and `massctl image build --profile`.
	Image string `json:"image,omitempty" yaml:"image,omitempty"`

	// Dir is the directory the spec was loaded from; relative paths resolve against it.
	Dir string `json:"-" yaml:"-"`

	lines map[string]int // field path -> line, as parsed
}

// Input is a file or directory copied into the workspace.
type Input struct {
	Path string `json:"path" yaml:"path"`                     // relative to the spec file
	Dest string `json:"dest,omitempty" yaml:"dest,omitempty"` // workspace-relative; default: base name of Path
}

// Limits bound one episode.
type Limits struct {
	EpisodeWallTime time.Duration `json:"episode_wall_time" yaml:"episode_wall_time"`
	AgentWallTime   time.Duration `json:"agent_wall_time,omitempty" yaml:"agent_wall_time,omitempty"` // per agent, the orchestrator's including its workers; 0: only the episode clock
	AgentTurns      int           `json:"agent_turns" yaml:"agent_turns"`
	Tokens          int64         `json:"tokens" yaml:"tokens"`
	CPUs            float64       `json:"cpus" yaml:"cpus"`
	MemoryBytes     int64         `json:"memory_bytes" yaml:"memory_bytes"`
	// GPUs is how many NVIDIA devices each agent box gets (0: none); massd
	// refuses more than its sandbox.max_gpus.
	GPUs int `json:"gpus,omitempty" yaml:"gpus,omitempty"`
}

// RecipeFile is a task's own scripted dry-run recipe, beside its spec in
// the task folder and in massd's stored task directory. It holds the
// task's answers, so it is never an input and never reaches a workspace.
const RecipeFile = "scripted-recipe.json"

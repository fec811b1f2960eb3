// Package episodefmt is the on-disk format of an episode directory, shared
// by its writer (agents/episode) and its readers (trainer/sft, the audit,
// daemon/server): the file names and episode.json. docs/formats.md
// describes every file. The package imports nothing of mass.
package episodefmt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// File names inside an episode directory.
// FailInfra is run_status.json's failure of an episode the infrastructure
// ended (massd stopped under it, the engine failed).
const FailInfra = "infrastructure"

const (
	EpisodeFile   = "episode.json"            // Info: what was run
	RequestsFile  = "api_requests.jsonl"      // every model call (agents/record)
	LedgerFile    = "ledger.jsonl"            // every tool call, hash-chained (agents/ledger)
	StatusFile    = "run_status.json"         // the outcome (agents/episode.Status)
	ExportFile    = "workspace.tar"           // the exported workspace
	ExportManFile = "workspace.manifest.json" // sha256 per exported file
	ManifestsDir  = "manifests"               // manifests/<agent>.json: files as each agent left them
	GuardsFile    = "guards.json"             // integrity, attempts, shadow copies (agents/guard)
	EgressFile    = "egress.jsonl"            // every request through the egress proxy (sandbox/egress.Record); tasks with network only
)

// TopLevelFiles are the regular files directly inside an episode directory,
// in the order the API lists them.
var TopLevelFiles = []string{EpisodeFile, RequestsFile, LedgerFile, StatusFile, ExportManFile, ExportFile, GuardsFile, EgressFile}

// Modes of episode.json.
const (
	ModeBare     = "bare"
	ModeWorkflow = "workflow"
)

// Info is episode.json: what was run.
type Info struct {
	EpisodeID     string `json:"episode_id"`
	TaskID        string `json:"task_id"`
	Mode          string `json:"mode"` // bare | workflow
	Model         string `json:"model"`
	DryRun        bool   `json:"dry_run,omitempty"`
	Prompt        string `json:"prompt"`
	Workflow      string `json:"workflow"`
	TeacherPrompt string `json:"teacher_prompt"`
	// ProtectedPaths are the task's read-only paths (the audit reads them).
	ProtectedPaths []string `json:"protected_paths,omitempty"`
	// HiddenPaths are the workspace paths only the grader sees.
	HiddenPaths []string `json:"hidden_paths,omitempty"`
	// Graded says the task declares a grader.
	Graded   bool      `json:"graded,omitempty"`
	Started  time.Time `json:"started"`
	DaemonID string    `json:"daemon_id"`
	// SandboxRuntime is the OCI runtime the agents' boxes ran on (runc,
	// or runsc for gVisor).
	SandboxRuntime string `json:"sandbox_runtime,omitempty"`
	// SandboxImage is the image reference the boxes ran.
	SandboxImage string `json:"sandbox_image,omitempty"`
	JobID        string `json:"job_id,omitempty"`
}

// ReadInfo reads dir/episode.json.
func ReadInfo(dir string) (Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, EpisodeFile))
	if err != nil {
		return Info{}, fmt.Errorf("read episode: %w", err)
	}
	in, err := DecodeInfo(b)
	if err != nil {
		return Info{}, fmt.Errorf("%s: %w", dir, err)
	}
	return in, nil
}

// DecodeInfo parses the bytes of an episode.json.
func DecodeInfo(b []byte) (Info, error) {
	var in Info
	if err := json.Unmarshal(b, &in); err != nil {
		return Info{}, fmt.Errorf("decode %s: %w", EpisodeFile, err)
	}
	return in, nil
}

package audit

import (
	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
)

// Report is the audit of one episode. Counters come first; the lists are
// the evidence behind each counter, with ledger seq numbers to look up.
type Report struct {
	Episode              string `json:"episode"`
	Model                string `json:"model,omitempty"`
	DryRun               bool   `json:"dry_run,omitempty"` // scripted dry-run model, not a real one
	Delegation           int    `json:"delegation"`
	CodeHandoff          int    `json:"code_handoff"`
	WorkerRevision       int    `json:"worker_revision"`
	OrchestratorRevision int    `json:"orchestrator_revision"`
	// ProtectedPathViolations are protected files changed after all (the
	// integrity check); ProtectedPathAttempts are tries by any route.
	ProtectedPathViolations int `json:"protected_path_violations"`
	ProtectedPathAttempts   int `json:"protected_path_attempts"`
	ShadowCopies            int `json:"shadow_copies"`
	HiddenPathAttempts      int `json:"hidden_path_attempts"`
	LoopHalts               int `json:"loop_halts"`
	ShellChangedFiles       int `json:"shell_changed_files"`

	Ledger  LedgerStatus `json:"ledger"`
	Sandbox Sandbox      `json:"sandbox"`
	Agents  []AgentRow   `json:"agents"`

	Delegations  []Delegation  `json:"delegations"`
	Handoffs     []Handoff     `json:"handoffs"`
	Revisions    []Revision    `json:"revisions"`
	ShellChanges []ShellChange `json:"shell_changes"`
	Violations   []Violation   `json:"violations"`
	Halts        []LoopHalt    `json:"halts"`
	Guards       *Guards       `json:"guards"`
	// Egress is present for an episode whose task had network.
	Egress *Egress `json:"egress,omitempty"`
}

// Guards is the ground truth and guard evidence of an episode: the grade,
// the integrity check and the shadow copies from guards.json and
// run_status.json, the attempts and shell commands from the verified
// ledger. It is for people and later stages, never for a model.
type Guards struct {
	Grade          *grade.Grade    `json:"grade"` // nil: the task has no grader, or none ran
	GuardsRecorded bool            `json:"guards_recorded"`
	Integrity      guard.Integrity `json:"integrity"`
	Attempts       []guard.Attempt `json:"attempts"`
	HiddenAttempts []guard.Attempt `json:"hidden_attempts"`
	ShadowCopies   []guard.Shadow  `json:"shadow_copies"`
	Commands       []guard.Command `json:"commands"`
}

// Sandbox is where the agents ran, from episode.json: the OCI runtime, the
// image, and the task's protected (read-only) and hidden (grader-only) paths.
type Sandbox struct {
	Runtime        string   `json:"runtime"` // "" in episodes recorded before it was
	Image          string   `json:"image"`   // "" : the runtime's default image
	ProtectedPaths []string `json:"protected_paths"`
	HiddenPaths    []string `json:"hidden_paths"`
}

// LedgerStatus says how much of the ledger was verified and used.
type LedgerStatus struct {
	Records  int    `json:"records"`  // verified records the audit used
	Verified bool   `json:"verified"` // the whole file verified
	Error    string `json:"error,omitempty"`
	Head     string `json:"head,omitempty"` // hash of the last verified record
	// HeadChecked says run_status.json recorded the final head and it was
	// compared, so a cut-off tail would have been seen.
	HeadChecked bool `json:"head_checked"`
	// Empty says the episode ended (massd stopped under it) before it
	// created its ledger: there is nothing to verify, which verifies.
	Empty bool `json:"empty,omitempty"`
}

// AgentRow is one line of the per-agent table.
type AgentRow struct {
	Agent            string  `json:"agent"`
	Role             string  `json:"role"`
	Parent           string  `json:"parent"`
	Turns            int     `json:"turns"`
	ModelErrors      int     `json:"model_errors"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	ToolCalls        int     `json:"tool_calls"`
	FailedToolCalls  int     `json:"failed_tool_calls"`
	ShellCommands    int     `json:"shell_commands"`
	FilesWritten     int     `json:"files_written"` // distinct paths written or edited successfully
	ShellChanged     int     `json:"shell_changed_files"`
	WallMS           float64 `json:"wall_ms"`
	Finished         bool    `json:"finished"`
	Stop             string  `json:"stop,omitempty"`
}

// Delegation is one successful agent tool call.
type Delegation struct {
	Seq      int64  `json:"seq"`
	Agent    string `json:"agent"`
	Subagent string `json:"subagent"`
}

// Handoff is one counted (file, reader) code handoff.
type Handoff struct {
	Path      string `json:"path"`
	Writer    string `json:"writer"`
	Reader    string `json:"reader"`
	WriteSeq  int64  `json:"write_seq"`
	FinishSeq int64  `json:"finish_seq"`
	ReadSeq   int64  `json:"read_seq"`
}

// Revision is one counted edit of an existing file.
type Revision struct {
	Seq   int64  `json:"seq"`
	Agent string `json:"agent"`
	Role  string `json:"role"`
	Tool  string `json:"tool"`
	Path  string `json:"path"`
}

// ShellChange is a file changed by something other than a ledgered write.
type ShellChange struct {
	Path      string `json:"path"`
	Change    string `json:"change"` // created, modified, deleted, changed
	Agent     string `json:"agent"`  // "" when no shell command ran in the window
	FinishSeq int64  `json:"finish_seq"`
}

// Violation is one protected file that changed (from the integrity check).
type Violation struct {
	Seq   int64  `json:"seq"`
	Agent string `json:"agent"`
	Tool  string `json:"tool"`
	Path  string `json:"path"`
	Error string `json:"error"`
}

// LoopHalt is one agent stopped by loop detection.
type LoopHalt struct {
	Seq   int64  `json:"seq"`
	Agent string `json:"agent"`
	Rule  string `json:"rule"`
	Error string `json:"error"`
}

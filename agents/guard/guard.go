// Package guard checks what the ownership defence cannot show by itself:
// whether protected files changed (integrity), which tool calls and shell
// commands tried to change them or to reach hidden paths (attempts), and
// which workspace files began as copies of protected code and were then
// edited and run (shadow copies). Its results are recorded for the audit,
// the data builder and the report, never shown to a model.
package guard

import (
	"path"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/internal/pathroot"
	"github.com/mass-dev/mass/sandbox"
)

// FileName is the guard record inside an episode directory.
const FileName = episodefmt.GuardsFile

// Workspace is where relative workspace paths are taken from.
const Workspace = sandbox.WorkspaceMount

// Report is guards.json.
type Report struct {
	Integrity      Integrity `json:"integrity"`
	Attempts       []Attempt `json:"attempts"`        // protected-path write attempts by any route
	HiddenAttempts []Attempt `json:"hidden_attempts"` // tool calls and commands that reached for a hidden path
	ShadowCopies   []Shadow  `json:"shadow_copies"`
	Commands       []Command `json:"commands"` // every shell command with its exit code
}

// Summary is the count line run_status.json and the job summary carry.
type Summary struct {
	ProtectedPathViolations int `json:"protected_path_violations"`
	ProtectedPathAttempts   int `json:"protected_path_attempts"`
	HiddenPathAttempts      int `json:"hidden_path_attempts"`
	ShadowCopies            int `json:"shadow_copies"`
	// IntegrityChecked says the before/after hashes were compared.
	IntegrityChecked bool `json:"integrity_checked"`
	// DurationMS is how long the check took (reading the ledger and the
	// export included).
	DurationMS float64 `json:"duration_ms"`
}

// Summary counts the report.
func (r *Report) Summary() Summary {
	return Summary{ProtectedPathViolations: len(r.Integrity.Changes), ProtectedPathAttempts: len(r.Attempts),
		HiddenPathAttempts: len(r.HiddenAttempts), ShadowCopies: len(r.ShadowCopies), IntegrityChecked: r.Integrity.Checked}
}

// Attempt is one tool call or shell command aimed at a protected or hidden path.
type Attempt struct {
	Seq     int64  `json:"seq"`
	Agent   string `json:"agent"`
	Tool    string `json:"tool"`
	Command string `json:"command"` // the shell command, or "<tool> <path>"
	Path    string `json:"path"`    // the protected or hidden path aimed at
	Result  string `json:"result"`  // "denied (EROFS)", the tool error, or "exit N"
}

// Command is one shell command as recorded.
type Command struct {
	Seq      int64    `json:"seq"`
	Agent    string   `json:"agent"`
	Command  string   `json:"command"`
	ExitCode int      `json:"exit_code"`
	OK       bool     `json:"ok"` // the tool call itself worked (the command may still have failed)
	Denied   []string `json:"denied,omitempty"`
	// StderrTail is the end of a failed command's stderr, as recorded.
	StderrTail string `json:"stderr_tail,omitempty"`
}

// shellDetail is the part of a run_shell_command record's detail read here.
type shellDetail struct {
	Command    string   `json:"command"`
	Denied     []string `json:"denied"`
	StderrTail string   `json:"stderr_tail"`
}

// Clean makes p absolute under /workspace and cleans it.
func Clean(p string) string {
	if p == "" {
		return ""
	}
	return resolve(p, Workspace)
}

// Under returns the root of roots (workspace-relative or absolute) that
// absolute p equals or lies below, or "".
func Under(p string, roots []string) string {
	for _, r := range roots {
		root := Clean(r)
		if root != "" && root != Workspace && pathroot.Under(p, root) {
			return root
		}
	}
	return ""
}

// isShell reports a shell tool record.
func isShell(r ledger.Record) bool { return r.Tool == "run_shell_command" }

// fileTools are the model-facing tools that take a path.
var fileTools = map[string]bool{"read_file": true, "write_file": true, "edit": true, "list_directory": true, "glob": true, "grep_search": true}

func shellDir(r ledger.Record) string {
	if r.Path != "" && path.IsAbs(r.Path) {
		return r.Path
	}
	return Workspace
}

// Inputs is everything Check looks at.
type Inputs struct {
	Records   []ledger.Record
	Protected []string // workspace-relative
	Hidden    []string // workspace-relative
	// Shipped are the protected files as the task shipped them (Shipped).
	Shipped  []File
	Exported []sandbox.FileInfo // the export's manifest
	Final    []File             // the export's code files (ReadExport)
	// Manifests are the agents' manifests: agent -> absolute path -> sha256.
	Manifests map[string]map[string]string
	// NoExport: the workspace could not be exported; integrity is unchecked.
	NoExport bool
}

// Check computes the whole report.
func Check(in Inputs) Report {
	var r Report
	r.Attempts, r.HiddenAttempts, r.Commands = Attempts(in.Records, in.Protected, in.Hidden)
	if in.NoExport {
		r.Integrity = Integrity{Changes: []Change{}}
		r.ShadowCopies = []Shadow{}
		return r
	}
	r.Integrity = CheckIntegrity(in.Shipped, in.Exported, in.Protected)
	r.ShadowCopies = ShadowCopies(in.Shipped, in.Final, in.Manifests, in.Records)
	return r
}

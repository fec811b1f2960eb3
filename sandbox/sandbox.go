// Package sandbox defines how mass runs model-generated code: one hardened
// container per agent on a per-episode workspace volume. Implementations live
// in subpackages (sandbox/docker); every one must pass sandbox/sandboxtest.
package sandbox

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/internal/boxspec"
)

// Sentinel error classes: the shared ones of package errclass, so that
// errors.Is matches across the sandbox, the job manager and the API.
// Implementations wrap them with context.
var (
	ErrNotFound = errclass.ErrNotFound
	ErrInvalid  = errclass.ErrInvalid
	ErrTooLarge = errclass.ErrTooLarge
	ErrDenied   = errclass.ErrDenied
	ErrTimeout  = errclass.ErrTimeout
	// ErrUnavailable is errclass.ErrUnavailable with the engine named.
	ErrUnavailable = fmt.Errorf("sandbox engine %w", errclass.ErrUnavailable)
)

// WorkspaceMount is where every agent sees the episode workspace.
const WorkspaceMount = boxspec.WorkspaceMount

// HelperMount is where a runtime mounts the file helper binary
// (sandbox/helper) inside every container.
const HelperMount = "/.mass/mass-sandbox-helper"

// HelperHostDir is the host directory (root-owned, mode 0711) a root
// daemon keeps its helper copies and the neutral /etc/hostname file in.
// Its name says nothing of the host: a box's mountinfo shows the root of
// each bind relative to its filesystem, so the agent sees only this path
// (F6). A daemon that is not root falls back to a directory below the
// temporary directory, whose path the probe reports.
const HelperHostDir = "/run/mass"

// WorkspaceSpec describes the shared volume of one episode.
type WorkspaceSpec struct {
	Episode string // episode id; also used in labels
	// Protected lists workspace-relative paths that agents see read-only.
	Protected []string
	// DiskBytes caps the workspace size; 0 means the policy default.
	DiskBytes int64
}

// Input is a host file or directory copied into a workspace before agents
// start. The host side is trusted (it comes from a task spec the operator added).
type Input struct {
	HostPath string // file or directory on the host
	Dest     string // workspace-relative destination
}

// Spec describes one agent sandbox.
type Spec struct {
	Episode string // owning episode
	Agent   string // agent id, unique within the episode ("orchestrator", "worker-1")
	Image   string // image reference; empty means the runtime default
	Policy  Policy // effective policy; zero value is invalid, start from DefaultPolicy()
	Env     map[string]string
}

// ExecRequest runs one command inside a sandbox.
type ExecRequest struct {
	Argv     []string // argv[0] resolved inside the container
	Dir      string   // working directory inside the container; default /workspace, relative to it if not absolute
	Stdin    io.Reader
	Timeout  time.Duration // 0 means policy default; on expiry the whole process tree is killed
	MaxBytes int           // cap on stdout and on stderr each; 0 means policy default
}

// ExecResult is what a command produced. Output beyond the cap is dropped and
// flagged, never buffered.
type ExecResult struct {
	ExitCode  int
	Stdout    []byte
	Stderr    []byte
	Truncated bool // stdout or stderr hit MaxBytes
	TimedOut  bool
	Duration  time.Duration
}

// FileInfo describes one workspace entry as seen from inside a sandbox.
type FileInfo struct {
	Path   string `json:"path"`
	Type   string `json:"type"` // "file", "dir", "symlink", "other"
	Size   int64  `json:"size"`
	Mode   uint32 `json:"mode"`
	SHA256 string `json:"sha256,omitempty"` // regular files only
	// Stripped holds the setuid/setgid/sticky bits the agent set and the
	// export removed (Mode is what the export holds).
	Stripped uint32 `json:"stripped,omitempty"`
	// Omitted says what of this entry (or below it) the export could not
	// carry, and why; empty when nothing is left out.
	Omitted string `json:"omitted,omitempty"`
}

// FileChange reports the effect of a write or edit.
type FileChange struct {
	Path         string `json:"path"`
	Created      bool   `json:"created"`
	Bytes        int64  `json:"bytes"`
	SHA256Before string `json:"sha256_before,omitempty"`
	SHA256After  string `json:"sha256_after"`
	Replacements int    `json:"replacements,omitempty"`
}

// ReadResult is a slice of a text file, by lines.
type ReadResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
	SHA256     string `json:"sha256"`
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Files are the file operations, executed inside the sandbox by the helper
// binary so that the host never opens a path inside the workspace. Paths are
// absolute container paths or relative to /workspace.
//
// Contract for every implementation (sandbox/sandboxtest checks it):
//   - Errors wrap the classes above: ErrNotFound for a missing path or for
//     Edit text that does not occur, ErrInvalid for a bad argument (an
//     ambiguous Edit without replaceAll, a bad Grep pattern, a directory
//     where a file is wanted), ErrDenied for a path the agent may not write
//     (protected or read-only), ErrTooLarge past a cap or when the
//     workspace is full, ErrUnavailable when the engine is down.
//   - Read, List, Glob, Grep, Stat and Manifest change nothing. Write is
//     idempotent: writing the same bytes again gives the same file (Created
//     is then false). Edit is not: a second identical Edit finds nothing.
//   - Write and Edit write the file in place: one that fails partway (the
//     workspace filled up) can leave it partly written.
//   - Methods are safe for concurrent use; concurrent writes to one path
//     land in no defined order.
type Files interface {
	Read(ctx context.Context, path string, offset, limit int) (ReadResult, error)
	Write(ctx context.Context, path string, content []byte) (FileChange, error)
	Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (FileChange, error)
	List(ctx context.Context, path string) ([]FileInfo, error)
	Glob(ctx context.Context, pattern, path string) ([]string, error)
	Grep(ctx context.Context, pattern, path, glob string) ([]GrepMatch, error)
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Manifest lists every regular file under /workspace with its sha256.
	Manifest(ctx context.Context) ([]FileInfo, error)
}

// Sandbox is one running agent container. Methods are safe for concurrent use.
type Sandbox interface {
	ID() string
	Agent() string
	// Exec runs one command. A command that ran and failed is not an error:
	// its exit code, timeout and truncation are in the ExecResult. The
	// error is for a command that could not run: ErrInvalid (empty argv),
	// ErrNotFound (the sandbox was removed), ErrUnavailable (engine down),
	// or ctx's error.
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)
	Files() Files
	// Stop kills every process in the sandbox; Remove deletes the
	// container. Both are idempotent: stopping a stopped sandbox or
	// removing a removed one succeeds. After Remove, Exec and Files fail
	// with ErrNotFound.
	Stop(ctx context.Context) error
	Remove(ctx context.Context) error
}

// Info describes a sandbox or workspace found by List.
type Info struct {
	ID      string
	Kind    string // "container" or "volume"
	Episode string
	Agent   string
	Daemon  string
	State   string
	Created time.Time
}

// Runtime creates sandboxes. Implementations are safe for concurrent use;
// errors wrap the sentinel classes above (ErrUnavailable when the engine is down).
type Runtime interface {
	Name() string
	// CreateWorkspace makes the episode volume and copies inputs into it.
	CreateWorkspace(ctx context.Context, ws WorkspaceSpec, inputs []Input) error
	// ExportWorkspace writes the workspace as a tar stream plus a manifest
	// with sha256 per regular file; links and special files are not followed.
	// Content beyond maxBytes fails with ErrTooLarge; maxBytes 0 means the
	// implementation's default cap, never none.
	ExportWorkspace(ctx context.Context, episode string, w io.Writer, maxBytes int64) ([]FileInfo, error)
	// RemoveWorkspace removes every container of the episode and its volume.
	RemoveWorkspace(ctx context.Context, episode string) error
	// Create starts the sandbox of spec.Agent on the workspace of
	// spec.Episode, which CreateWorkspace made before (else ErrNotFound).
	// It is not idempotent: an (episode, agent) pair names one sandbox, and
	// creating it again while it exists fails with ErrInvalid. A bad spec
	// (ids outside datadir.ValidID, a zero or weakened policy in strict
	// mode) fails with ErrInvalid or ErrDenied before anything is made; a
	// failed Create leaves no container behind.
	Create(ctx context.Context, spec Spec) (Sandbox, error)
	// List returns the containers and volumes of an episode ("" for all of this daemon's).
	List(ctx context.Context, episode string) ([]Info, error)
	// KillEpisode stops and removes every agent container of an episode
	// (cancellation: done within 2 s). The workspace stays so that it can
	// still be exported; RemoveWorkspace removes it.
	KillEpisode(ctx context.Context, episode string) error
	// ReapOrphans removes containers and volumes of this daemon that no live episode owns.
	ReapOrphans(ctx context.Context, live func(episode string) bool) (int, error)
	// Report describes the effective policy and the engine it runs on.
	Report(ctx context.Context) (Report, error)
	// Grade runs a task's grader in a fresh container of its own (see
	// GradeSpec) and removes everything it made before returning. The
	// error is about the run; a failing grader is reported in the result.
	Grade(ctx context.Context, g GradeSpec) (ExecResult, error)
	Close() error
}

// GraderAgent is the agent label of a grader's container.
const GraderAgent = "grader"

// GraderPath is the grader's PATH: system directories only, never the
// workspace or ".", so `sh -c` finds no agent-written program by name.
const GraderPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// GraderEnv is the environment every grader runs in, over the image's.
// The grader's cwd is /workspace, which holds the agent's files, so
// nothing may import from it unasked: PYTHONSAFEPATH keeps the cwd (for
// -m, -c and stdin) and the script's directory off sys.path,
// PYTHONNOUSERSITE the user site (with its .pth files) too, and PATH
// names system directories only. A grader that imports a module beside
// its (protected) script adds that directory itself.
func GraderEnv() map[string]string {
	return map[string]string{
		"PATH":                    GraderPath,
		"PYTHONSAFEPATH":          "1",
		"PYTHONNOUSERSITE":        "1",
		"PYTHONDONTWRITEBYTECODE": "1",
		"HOME":                    "/tmp",
	}
}

// GradeSpec describes one grader run: a fresh workspace named after
// Workspace (an episode id of its own, so it never meets the graded
// episode's volume) is filled from Export, a tar as ExportWorkspace writes
// it, minus every entry under Replace and minus symbolic links (an agent's
// link must not point the grader at a hidden file); then Inputs (the task's
// protected and hidden paths as shipped) are copied over it. The grader
// sees that workspace read-only at /workspace and runs `sh -c Command`
// there, in GraderEnv, under Policy, which must keep the network off.
type GradeSpec struct {
	Workspace string
	Export    io.Reader
	Replace   []string // workspace-relative
	Inputs    []Input
	Command   string
	Timeout   time.Duration
	Image     string // empty: the runtime default
	Policy    Policy // zero: DefaultPolicy()
	MaxBytes  int    // stdout/stderr cap; 0: the policy's
}

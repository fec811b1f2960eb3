// Package probe runs the isolation self-test behind `massctl sandbox verify`:
// the static mass-probe binary inside agent containers created with the
// policy under test, plus host-side probes through the runtime's file
// operations and workspace export. Every probe reports expected vs observed.
package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/probe/check"
)

// Probe groups; Options.Groups selects among them.
const (
	GroupStatic    = "static"    // quick in-container checks
	GroupResources = "resources" // fork bomb, memory bomb, fills, CPU burn
	GroupHost      = "host"      // host-side probes through file ops and export
	GroupUsability = "usability" // everyday commands (ls, stat, tar, ps, python3…) exit 0
)

// AllGroups runs everything.
var AllGroups = []string{GroupUsability, GroupStatic, GroupResources, GroupHost}

// Defaults of the probe episode.
const (
	ProbeWorkspaceBytes = 64 << 20 // the probe workspace's disk cap (same mechanism, smaller size)
	DefaultRaceOps      = 10000
	probePath           = sandbox.WorkspaceMount + "/.mass-probe"
	protectedDir        = "protected"
)

// Options configure one verify run.
type Options struct {
	// Runtime creates the containers. Its default policy must be Policy
	// (the workspace disk cap comes from it when Policy.DiskBytes is 0).
	Runtime sandbox.Runtime
	// Engine, when set, finds the Docker bridge gateway and the other
	// agent's host pid; probes that need it fail without it.
	Engine *client.Client
	// Probe is the host path of the static mass-probe binary.
	Probe string
	// Image runs the probes; empty means the runtime default.
	Image string
	// Reference is the policy whose promises are checked.
	Reference sandbox.Policy
	// Policy is applied to the containers; equal to Reference unless weakened.
	Policy sandbox.Policy
	// Env is given to the agent containers (normally empty).
	Env map[string]string
	// ReadableHelper mounts the helper binary readable by the agent (a
	// weakening); the runtime must be made with docker.Config.ReadableHelper.
	ReadableHelper bool
	// EngineMasks keeps the engine's default masked paths (a weakening);
	// the runtime must be made with docker.Config.EngineMasks.
	EngineMasks bool
	// NoProtect skips mounting the protected path (a weakening).
	NoProtect bool
	// Groups to run; AllGroups when empty.
	Groups []string
	// RaceOps is the number of host file operations during the swap race.
	RaceOps int
	Logger  *slog.Logger
}

// Report is what verify prints; its JSON shape is part of the CLI contract.
type Report struct {
	Runtime string `json:"runtime"` // the OCI runtime the boxes ran on
	// RuntimeVersion, RuntimeChoice, Image, ImageID and Engine say what
	// exactly was probed (RuntimeChoice: how auto resolved, if it did).
	RuntimeVersion string         `json:"runtime_version"`
	RuntimeChoice  string         `json:"runtime_choice,omitempty"`
	Image          string         `json:"image"`
	ImageID        string         `json:"image_id"`
	Engine         string         `json:"engine"`
	Groups         []string       `json:"groups"`
	Probes         []check.Result `json:"probes"`
	Passed         int            `json:"passed"`
	Failed         int            `json:"failed"`
	// NotProven is what a run that passed still does not show.
	NotProven []string `json:"not_proven"`
}

// Failing lists the names of failed probes.
func (r Report) Failing() []string {
	var out []string
	for _, p := range r.Probes {
		if !p.OK {
			out = append(out, p.Name)
		}
	}
	return out
}

func (r *Report) add(rs ...check.Result) {
	for _, x := range rs {
		r.Probes = append(r.Probes, x)
		if x.OK {
			r.Passed++
		} else {
			r.Failed++
		}
	}
}

// run is the state of one verify run.
type run struct {
	o       Options
	log     *slog.Logger
	episode string
	a, b    sandbox.Sandbox
	secret  string
	hostDir string // host directory holding the secret
	diskCap int64  // workspace cap applied (from Policy)
	refDisk int64  // workspace cap promised (from Reference)
	runtime string // the boxes' OCI runtime, auto resolved
	report  Report
}

// Run executes the selected probe groups and returns the report. An error
// means the probes could not run at all (no engine, no binary), not that a
// probe failed.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Runtime == nil {
		return Report{}, fmt.Errorf("verify: no runtime: %w", sandbox.ErrInvalid)
	}
	if st, err := os.Stat(o.Probe); err != nil || !st.Mode().IsRegular() {
		return Report{}, fmt.Errorf("verify: probe binary %q missing (build it with CGO_ENABLED=0 go build ./sandbox/probe/cmd/mass-probe): %w", o.Probe, sandbox.ErrInvalid)
	}
	if len(o.Groups) == 0 {
		o.Groups = AllGroups
	}
	if o.RaceOps <= 0 {
		o.RaceOps = DefaultRaceOps
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &run{o: o, log: o.Logger, episode: "verify-" + randHex(6), secret: "mass-secret-" + randHex(16)}
	if o.Policy.DiskBytes > 0 {
		r.diskCap = min(o.Policy.DiskBytes, ProbeWorkspaceBytes)
	}
	if o.Reference.DiskBytes > 0 {
		r.refDisk = min(o.Reference.DiskBytes, ProbeWorkspaceBytes)
	}
	if err := r.describe(ctx); err != nil {
		return Report{}, err
	}
	defer r.cleanup()
	if err := r.setup(ctx); err != nil {
		return Report{}, err
	}
	for _, g := range o.Groups {
		var err error
		switch g {
		case GroupStatic:
			err = r.static(ctx)
		case GroupResources:
			err = r.resources(ctx)
		case GroupHost:
			err = r.host(ctx)
		case GroupUsability:
			err = r.usability(ctx)
		default:
			err = fmt.Errorf("verify: unknown probe group %q: %w", g, sandbox.ErrInvalid)
		}
		if err != nil {
			return r.report, err
		}
	}
	return r.report, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// setup makes the host secret, the workspace with a protected input, two
// agents, and copies the probe binary into the workspace.
func (r *run) setup(ctx context.Context) error {
	var err error
	if r.hostDir, err = os.MkdirTemp("", "mass-probe-host-"); err != nil {
		return fmt.Errorf("verify: make host secret dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.hostDir, "secret.txt"), []byte(r.secret+"\n"), 0o644); err != nil {
		return fmt.Errorf("verify: write host secret: %w", err)
	}
	inputs := filepath.Join(r.hostDir, "inputs")
	if err := os.MkdirAll(filepath.Join(inputs, protectedDir), 0o755); err != nil {
		return fmt.Errorf("verify: make inputs: %w", err)
	}
	if err := os.WriteFile(filepath.Join(inputs, protectedDir, "evaluate.py"), []byte("print('score')\n"), 0o644); err != nil {
		return fmt.Errorf("verify: write protected input: %w", err)
	}
	ws := sandbox.WorkspaceSpec{Episode: r.episode, DiskBytes: r.diskCap}
	if !r.o.NoProtect {
		ws.Protected = []string{protectedDir}
	}
	in := []sandbox.Input{{HostPath: filepath.Join(inputs, protectedDir), Dest: protectedDir}}
	if err := r.o.Runtime.CreateWorkspace(ctx, ws, in); err != nil {
		return fmt.Errorf("verify: create probe workspace: %w", err)
	}
	for i, agent := range []string{"probe-a", "probe-b"} {
		sb, err := r.o.Runtime.Create(ctx, sandbox.Spec{Episode: r.episode, Agent: agent, Image: r.o.Image, Policy: r.o.Policy, Env: r.o.Env})
		if err != nil {
			return fmt.Errorf("verify: create probe container %s: %w", agent, err)
		}
		if i == 0 {
			r.a = sb
		} else {
			r.b = sb
		}
	}
	return r.copyProbe(ctx, r.a)
}

func (r *run) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.o.Runtime.KillEpisode(ctx, r.episode); err != nil {
		r.log.Warn("remove probe containers", "episode", r.episode, "err", err)
	}
	if err := r.o.Runtime.RemoveWorkspace(ctx, r.episode); err != nil {
		r.log.Warn("remove probe workspace", "episode", r.episode, "err", err)
	}
	if r.hostDir != "" {
		os.RemoveAll(r.hostDir)
	}
}

// config is what the in-container checks are told about the reference policy.
func (r *run) config() check.Config {
	uid, _, _ := sandbox.ParseUser(r.o.Reference.User)
	c := check.Config{
		UID: uid, Workspace: sandbox.WorkspaceMount, Helper: helperMount,
		PidsLimit: r.o.Reference.PidsLimit, MemoryBytes: r.o.Reference.MemoryBytes,
		TmpfsBytes: r.o.Reference.TmpfsBytes, DiskBytes: r.refDisk, NanoCPUs: r.o.Reference.NanoCPUs,
		Runtime: r.runtime,
	}
	c.Protected = []string{sandbox.WorkspaceMount + "/" + protectedDir, sandbox.WorkspaceMount + "/" + protectedDir + "/evaluate.py"}
	return c
}

// exec runs the probe binary in sb and decodes its JSON results.
func (r *run) exec(ctx context.Context, sb sandbox.Sandbox, timeout time.Duration, args ...string) ([]check.Result, sandbox.ExecResult, error) {
	res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: append([]string{probePath}, args...), Timeout: timeout, MaxBytes: check.MaxOutput})
	if err != nil {
		return nil, res, fmt.Errorf("run probe %s in %s: %w", args[0], sb.Agent(), err)
	}
	if res.ExitCode != 0 {
		return nil, res, fmt.Errorf("probe %s in %s exited %d: %s", args[0], sb.Agent(), res.ExitCode, bytes.TrimSpace(res.Stderr))
	}
	rs, err := check.ParseResults(res.Stdout)
	if err != nil {
		return nil, res, fmt.Errorf("probe %s in %s: %w", args[0], sb.Agent(), err)
	}
	return rs, res, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func markerHash(m string) string {
	s := sha256.Sum256([]byte(m))
	return hex.EncodeToString(s[:])
}

package docker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// box is one agent container.
type box struct {
	r       *Runtime
	id      string
	episode string
	agent   string
	policy  sandbox.Policy
	// ops carries file operations over one long-lived helper session.
	ops       *fileOps
	opTimeout time.Duration
	// execs counts commands in flight; the last to end sweeps, holding
	// gate so that no command starts during the sweep.
	execs atomic.Int32
	gate  sync.RWMutex

	mu    sync.Mutex
	procs string   // host cgroup.procs file of the container, once known
	bg    []bgProc // background command wrappers the sweep spares (background.go)
}

var _ sandbox.Sandbox = (*box)(nil)

// Create starts an agent container on the episode's workspace with every
// Policy field applied (see hostConfig).
func (r *Runtime) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	return boxhost.Started(r.create(ctx, spec, false))
}

// create starts a container; readOnly mounts the workspace read-only (the
// grader's).
func (r *Runtime) create(ctx context.Context, spec sandbox.Spec, readOnly bool) (*box, error) {
	if err := boxhost.CheckSpec(spec, sandbox.ValidID); err != nil {
		return nil, err
	}
	pol := spec.Policy
	pol.Runtime = r.egressRuntime(ctx, spec, r.policyRuntime(pol.Runtime))
	if err := pol.Validate(); err != nil {
		return nil, fmt.Errorf("create sandbox %s/%s: %w", spec.Episode, spec.Agent, err)
	}
	ok, err := r.hasRuntime(ctx, pol.Runtime)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("create sandbox: OCI runtime %q is not registered with the engine (install and register it, or use runc): %w", pol.Runtime, sandbox.ErrUnavailable)
	}
	if err := boxhost.Weakened(pol, spec, r.cfg.Strict, r.log); err != nil {
		return nil, err
	}
	if uid, _, _ := sandbox.ParseUser(pol.User); uid == r.helperUID && uid != 0 && !r.cfg.ReadableHelper {
		return nil, fmt.Errorf("create sandbox: the helper copy is owned by the agent's uid %d, which could read it (run massd as another user): %w", uid, sandbox.ErrDenied)
	}
	vol, err := r.cli.VolumeInspect(ctx, volumeName(spec.Episode))
	if err != nil {
		return nil, wrapErr("create sandbox: workspace of "+spec.Episode+" (call CreateWorkspace first)", err)
	}
	hc, err := hostConfig(pol, volumeName(spec.Episode), r.helperFor(pol.Runtime))
	if err != nil {
		return nil, err
	}
	if !readOnly {
		chargeTmpfs(hc, pol, tmpfsVolumeBytes(vol.Options))
	} else {
		chargeTmpfs(hc, pol, 0)
	}
	hc.Mounts[0].ReadOnly = readOnly
	if err := r.applyGPUs(ctx, hc, pol); err != nil {
		return nil, err
	}
	if r.cfg.EngineMasks {
		hc.MaskedPaths = nil
	}
	image := spec.Image
	if image == "" {
		image = r.cfg.Image
	}
	env, err := boxhost.Env(spec.Env, pol, !readOnly)
	if err != nil {
		return nil, err
	}
	// The main processes (init and pause) run under a uid of their own, so
	// the agent can neither signal nor trace them (ContainerUser names the
	// one weakened exception); every exec names the agent's user
	// explicitly. They never need the workspace: "/" keeps them
	// independent of its permissions.
	cfg := &container.Config{
		Image:           image,
		User:            pol.ContainerUser(),
		Entrypoint:      []string{HelperMount},
		Cmd:             []string{"pause"},
		WorkingDir:      "/",
		Env:             boxhost.EnvList(env),
		Labels:          r.labels(spec.Episode, spec.Agent, kindAgent),
		NetworkDisabled: pol.NetworkMode == "none",
		Hostname:        spec.Agent,
	}
	if pol.Egress != nil {
		if err := r.applyEgress(ctx, spec.Episode, *pol.Egress, hc, cfg); err != nil {
			return nil, fmt.Errorf("create sandbox %s/%s: %w", spec.Episode, spec.Agent, err)
		}
	}
	resp, err := r.cli.ContainerCreate(ctx, cfg, hc, nil, nil, agentName(spec.Episode, spec.Agent))
	if err != nil {
		what := fmt.Sprintf("create sandbox %s/%s", spec.Episode, spec.Agent)
		if cerrdefs.IsNotFound(err) {
			what += fmt.Sprintf(" (image %s missing? build it with `%s`)", image, sandbox.BuildHint(image))
		}
		return nil, wrapErr(what, err)
	}
	if err := r.startContainer(ctx, resp.ID, pol.Runtime, fmt.Sprintf("start sandbox %s/%s", spec.Episode, spec.Agent)); err != nil {
		return nil, err
	}
	if pol.Egress != nil {
		if err := r.noteEgressAgent(ctx, resp.ID, spec.Episode, spec.Agent); err != nil {
			_ = r.cli.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
			return nil, err
		}
	}
	return r.newBox(resp.ID, spec.Episode, spec.Agent, pol), nil
}

func (r *Runtime) newBox(id, episode, agent string, pol sandbox.Policy) *box {
	b := &box{r: r, id: id, episode: episode, agent: agent, policy: pol, opTimeout: fileOpTimeout}
	b.ops = newFileOps(b.startSession, b.killAll)
	return b
}

func (b *box) ID() string    { return b.id }
func (b *box) Agent() string { return b.agent }

// Exec runs the command under the helper's exec wrapper, which kills the
// whole process tree at the timeout. Should the wrapper itself be killed by
// the command, the host kills every process of the agent after a grace.
func (b *box) Exec(ctx context.Context, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	cmd, err := boxhost.NewCommand(req, b.policy)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	b.gate.RLock()
	b.execs.Add(1)
	res, err := b.r.execRaw(ctx, b.id, execOpts{
		argv: cmd.Wrapped(), user: b.policy.User, dir: cmd.Dir, stdin: req.Stdin, maxBytes: cmd.MaxBytes,
		hostTimeout: cmd.HostTimeout(),
		onAbort:     b.killAll,
		watch:       b.isRunsc(),
	})
	last := b.execs.Add(-1) == 0
	b.gate.RUnlock()
	if last {
		// Whatever the wrapper's status, nothing the command started may
		// outlive it (F2); a command still running in another Exec defers
		// the sweep to that one's end.
		b.gate.Lock()
		if b.execs.Load() == 0 {
			b.sweepAfter(ctx, res.ExitCode)
		}
		b.gate.Unlock()
	}
	if err != nil {
		return res, fmt.Errorf("exec in %s/%s: %w", b.episode, b.agent, err)
	}
	return cmd.Result(res), nil
}

// sweepAfter kills every agent process but the file-helper session once a
// command has ended. Where the host cannot sweep (a weakened policy whose
// main processes share the agent's uid) the helper's orphans sweep runs
// after a wrapper that was killed, as before.
func (b *box) sweepAfter(ctx context.Context, exit int) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if !b.hostSweep() {
		if exit >= 128 {
			b.killOrphans(ctx)
		}
		return
	}
	if err := b.sweepKeeping(ctx); err != nil {
		b.r.log.Warn("sweep agent processes", "episode", b.episode, "agent", b.agent, "err", err)
		b.killOrphans(ctx)
	}
}

// sweepKeeping kills every agent process but the live file-helper session,
// the way the box's runtime allows (runc: host cgroup; runsc: runsc).
func (b *box) sweepKeeping(ctx context.Context) error {
	if b.isRunsc() {
		return b.sweepRunsc(ctx, true)
	}
	return b.sweep(ctx, b.sessionPID(ctx))
}

// sweepAll kills every agent process, the file helper included.
func (b *box) sweepAll(ctx context.Context) error {
	if b.isRunsc() {
		return b.sweepRunsc(ctx, false)
	}
	return b.sweep(ctx, 0)
}

// hostSweep reports whether the host-side sweep applies: it kills by uid,
// so it cannot tell the agent from the main processes when a weakened
// policy runs both as the same user.
func (b *box) hostSweep() bool {
	return b.policy.ContainerUser() != b.policy.User
}

// killOrphans kills processes whose exec wrapper died, through the helper
// (the fallback where the host cannot sweep).
func (b *box) killOrphans(ctx context.Context) {
	_, err := b.r.execRaw(ctx, b.id, execOpts{argv: []string{HelperMount, "orphans"}, user: b.policy.User, dir: "/", maxBytes: 4096})
	if err != nil {
		b.r.log.Warn("kill orphaned agent processes", "episode", b.episode, "agent", b.agent, "err", err)
	}
}

// killAll kills every process of the agent user inside the container, the
// file helper included: from the host when it can (sweep), else through the
// helper's killall. The main processes run under another uid and are out of
// its reach (unless a weakened policy makes the agent a root with
// capabilities).
func (b *box) killAll(ctx context.Context) {
	if b.hostSweep() {
		err := b.sweepAll(ctx)
		if err == nil {
			return
		}
		b.r.log.Warn("sweep agent processes", "episode", b.episode, "agent", b.agent, "err", err)
	}
	_, err := b.r.execRaw(ctx, b.id, execOpts{argv: []string{HelperMount, "killall"}, user: b.policy.User, dir: "/", maxBytes: 4096})
	if err != nil {
		b.r.log.Warn("kill agent processes", "episode", b.episode, "agent", b.agent, "err", err)
	}
}

// Stop kills every process in the container (it stays, stopped).
func (b *box) Stop(ctx context.Context) error {
	b.ops.reset(false)
	if err := b.r.cli.ContainerKill(ctx, b.id, "KILL"); err != nil && !isNotFound(err) && !isNotRunning(err) {
		return wrapErr("stop sandbox "+b.agent, err)
	}
	return nil
}

// Remove deletes the container, killing it first if needed.
func (b *box) Remove(ctx context.Context) error {
	b.ops.reset(true)

	if err := b.r.forceRemove(ctx, b.id, b.policy.Runtime); err != nil {
		return fmt.Errorf("remove sandbox %s: %w", b.agent, err)
	}
	return nil
}

func isNotRunning(err error) bool {
	return err != nil && strings.Contains(err.Error(), "is not running")
}

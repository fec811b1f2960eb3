package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// Labels put on every container and volume: the backends' (boxhost).
const (
	LabelDaemon  = boxhost.LabelDaemon
	LabelEpisode = boxhost.LabelEpisode
	LabelAgent   = boxhost.LabelAgent
	LabelKind    = boxhost.LabelKind

	kindAgent     = boxhost.KindAgent
	kindWorkspace = boxhost.KindWorkspace
	keeperAgent   = boxhost.KeeperAgent // the workspace keeper container's
)

// DefaultImage is used when a Spec names no image.
const DefaultImage = "mass-agent:latest"

// Config configures the Docker runtime.
type Config struct {
	DaemonID   string // value of the mass.daemon label; required
	HelperPath string // host path of the static mass-sandbox-helper; required
	// ReadableHelper mounts the helper copy mode 0755 instead of HelperMode:
	// a weakening, for the probe that shows the start-up race.
	ReadableHelper bool
	// EngineMasks leaves the engine's default masked paths, so the kernel's
	// command line and configuration are readable: a weakening, for the
	// probe kernel_info_masked.
	EngineMasks bool
	Image       string         // default image; DefaultImage when empty
	Policy      sandbox.Policy // default policy for workspaces; DefaultPolicy() when zero
	Strict      bool           // refuse to start when Report has warnings
	// DiskMode is DiskTmpfs (default) or DiskMonitor.
	DiskMode string
	// MonitorInterval is DiskMonitor's period; DefaultMonitorInterval when 0.
	MonitorInterval time.Duration
	Logger          *slog.Logger
	// Client is optional; NewClient(EngineTimeout) otherwise. A client made
	// elsewhere has no deadline on exec attach handshakes: make it with
	// NewClient.
	Client *client.Client
	// EngineTimeout bounds each engine call's wait for an answer;
	// DefaultEngineTimeout when 0.
	EngineTimeout time.Duration
	// Egress configures the proxies of boxes with Policy.Egress (egress.go).
	Egress EgressConfig
	// GPU caps and locates the devices of boxes with Policy.GPUs (gpu.go).
	GPU GPUConfig
}

// Runtime is the Docker implementation of sandbox.Runtime.
type Runtime struct {
	cli    *client.Client
	cfg    Config
	log    *slog.Logger
	ownCli bool

	ctx    context.Context // ends at Close; parent of the disk monitors
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// helperBin is the private copy of the helper mounted into
	// containers; helperUID owns it.
	helperBin string
	helperUID int
	// helperReadable is the mode-0755 copy: gVisor cannot execute a
	// binary its user cannot read, so runsc boxes mount it and close the
	// start-up race another way (see startSession).
	helperReadable string

	// runtimeChoice and runtimeNote say how the default policy's OCI
	// runtime was resolved (see resolveRuntime).
	runtimeChoice, runtimeNote string

	mu       sync.Mutex
	runtimes map[string]string // OCI runtimes the engine has registered, by name: their paths
	monitors map[string]context.CancelFunc
	overCap  map[string]bool

	egress egressTable // the episodes' egress proxies
}

var _ sandbox.Runtime = (*Runtime)(nil)

// New connects to the engine (DOCKER_HOST or the default socket), negotiates
// the API version and checks the helper binary. It returns an error wrapping
// sandbox.ErrUnavailable when no engine answers.
func New(ctx context.Context, cfg Config) (*Runtime, error) {
	if !sandbox.ValidID(cfg.DaemonID) {
		return nil, fmt.Errorf("docker runtime: daemon id %q: %w", cfg.DaemonID, sandbox.ErrInvalid)
	}
	st, err := os.Stat(cfg.HelperPath)
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("docker runtime: helper binary %q missing (build it with CGO_ENABLED=0 go build ./sandbox/helper/cmd/mass-sandbox-helper): %w", cfg.HelperPath, sandbox.ErrInvalid)
	}
	if cfg.Image == "" {
		cfg.Image = DefaultImage
	}
	if cfg.Policy.Runtime == "" {
		cfg.Policy = sandbox.DefaultPolicy()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch cfg.DiskMode {
	case "":
		cfg.DiskMode = DiskTmpfs
	case DiskTmpfs, DiskMonitor:
	default:
		return nil, fmt.Errorf("docker runtime: disk mode %q: want %q or %q: %w", cfg.DiskMode, DiskTmpfs, DiskMonitor, sandbox.ErrInvalid)
	}
	if cfg.MonitorInterval <= 0 {
		cfg.MonitorInterval = DefaultMonitorInterval
	}
	r := &Runtime{cli: cfg.Client, cfg: cfg, log: cfg.Logger.With("component", "sandbox/docker"),
		monitors: map[string]context.CancelFunc{}, overCap: map[string]bool{}}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if r.cli == nil {
		c, err := NewClient("", cfg.EngineTimeout)
		if err != nil {
			return nil, fmt.Errorf("docker client: %w", errors.Join(err, sandbox.ErrUnavailable))
		}
		r.cli, r.ownCli = c, true
	}
	if r.helperBin, err = installHelper(cfg.HelperPath, cfg.ReadableHelper); err != nil {
		r.Close()
		return nil, fmt.Errorf("docker runtime: %w", err)
	}
	if r.helperReadable, err = installHelper(cfg.HelperPath, true); err != nil {
		r.Close()
		return nil, fmt.Errorf("docker runtime: %w", err)
	}
	if r.helperUID, err = helperOwner(r.helperBin); err != nil {
		r.Close()
		return nil, fmt.Errorf("docker runtime: %w", err)
	}
	if _, err := r.cli.Ping(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("ping docker engine: %v: %w", err, sandbox.ErrUnavailable)
	}
	r.cli.NegotiateAPIVersion(ctx)
	if r.cfg.Policy.Runtime, r.runtimeChoice, r.runtimeNote, err = r.resolveRuntime(ctx, cfg.Policy.Runtime); err != nil {
		r.Close()
		return nil, fmt.Errorf("docker runtime: %w", err)
	}
	if r.runtimeNote != "" {
		r.log.Warn(r.runtimeNote)
	}
	if cfg.Strict {
		rep, err := r.Report(ctx)
		if err != nil {
			r.Close()
			return nil, err
		}
		if len(rep.Warnings) > 0 {
			r.Close()
			return nil, fmt.Errorf("strict mode: %s: %w", strings.Join(rep.Warnings, "; "), sandbox.ErrDenied)
		}
	}
	return r, nil
}

// Name returns "docker".
func (r *Runtime) Name() string { return "docker" }

// Client exposes the engine client (for the image builder and the probes).
func (r *Runtime) Client() *client.Client { return r.cli }

// Close stops the disk monitors and releases the client; containers keep
// running.
func (r *Runtime) Close() error {
	r.cancel()
	r.wg.Wait()
	if r.ownCli {
		return r.cli.Close()
	}
	return nil
}

func (r *Runtime) labels(episode, agent, kind string) map[string]string {
	return boxhost.Labels(r.cfg.DaemonID, episode, agent, kind)
}

func volumeName(episode string) string       { return "mass-ws-" + episode }
func keeperName(episode string) string       { return "mass-ws-" + episode }
func agentName(episode, agent string) string { return "mass-" + episode + "-" + agent }

// wrapErr maps engine errors onto the sandbox sentinels.
func wrapErr(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case cerrdefs.IsNotFound(err), isNotRunning(err):
		// A stopped or vanishing container is gone for the caller's purposes.
		return fmt.Errorf("%s: %v: %w", what, err, sandbox.ErrNotFound)
	case cerrdefs.IsConflict(err):
		return fmt.Errorf("%s: %v: %w", what, err, sandbox.ErrInvalid)
	case cerrdefs.IsInvalidArgument(err):
		return fmt.Errorf("%s: %v: %w", what, err, sandbox.ErrInvalid)
	case client.IsErrConnectionFailed(err):
		return fmt.Errorf("%s: %v: %w", what, err, sandbox.ErrUnavailable)
	case isNoAnswer(err):
		return fmt.Errorf("%s: %w within its deadline (%v): %w", what, errNoAnswer, err, sandbox.ErrUnavailable)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", what, errors.Join(err, sandbox.ErrTimeout))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// hasRuntime reports whether the engine registered an OCI runtime.
func (r *Runtime) hasRuntime(ctx context.Context, name string) (bool, error) {
	r.mu.Lock()
	known := r.runtimes
	r.mu.Unlock()
	if known == nil {
		info, err := r.cli.Info(ctx)
		if err != nil {
			return false, wrapErr("docker info", err)
		}
		known = map[string]string{}
		for k, v := range info.Runtimes {
			known[k] = v.Path
			if known[k] == "" {
				known[k] = k
			}
		}
		r.mu.Lock()
		r.runtimes = known
		r.mu.Unlock()
	}
	return known[name] != "", nil
}

// runtimePath is the binary the engine runs for a registered OCI runtime.
func (r *Runtime) runtimePath(ctx context.Context, name string) (string, error) {
	if ok, err := r.hasRuntime(ctx, name); err != nil || !ok {
		return "", errors.Join(err, fmt.Errorf("OCI runtime %q is not registered: %w", name, sandbox.ErrUnavailable))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runtimes[name], nil
}

// helperFor is the helper copy a container of the OCI runtime mounts.
func (r *Runtime) helperFor(runtime string) string {
	if runtime == sandbox.RuntimeRunsc {
		return r.helperReadable
	}
	return r.helperBin
}

// HelperEnv names the environment variable that overrides where the helper
// binary is looked up.
const HelperEnv = "MASS_SANDBOX_HELPER"

// FindHelper returns the helper binary: $MASS_SANDBOX_HELPER, else
// mass-sandbox-helper beside the running executable.
func FindHelper() (string, error) {
	if p := os.Getenv(HelperEnv); p != "" {
		return p, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find sandbox helper: %w", err)
	}
	p := filepath.Join(filepath.Dir(exe), "mass-sandbox-helper")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("find sandbox helper: %s missing (CGO_ENABLED=0 go build -o %s ./sandbox/helper/cmd/mass-sandbox-helper, or set %s): %w", p, p, HelperEnv, sandbox.ErrNotFound)
	}
	return p, nil
}

package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/egress"
)

// Egress layout of one episode whose boxes have Policy.Egress:
//
//   - network mass-egress-<episode>: bridge, Internal (no route out) and
//     inhibit_ipv4 (the host's bridge has no address there, so the host's
//     own services are out of reach too). Its only members are the agents
//     and the proxy.
//   - container mass-egress-<episode> (mass.kind=egress): the static
//     mass-egress-proxy bind-mounted read-only, run as a uid of its own
//     without capabilities, on the episode network and on the outer
//     network (EgressConfig.Network). Agents get HTTP_PROXY/HTTPS_PROXY
//     pointing at it, and the engine's DNS in every agent forwards to it,
//     so no query leaves the episode network unanswered by the proxy.
//     Its records are its stdout, kept by the engine until removal.

// EgressConfig configures the proxies of egress boxes.
type EgressConfig struct {
	// ProxyPath is the host path of the static mass-egress-proxy; an
	// egress box fails with ErrUnavailable without it.
	ProxyPath string
	// Network is what the proxy reaches the internet through; "bridge"
	// when empty.
	Network string
	// Image runs the proxy; the runtime's default image when empty.
	Image string
	// DNS are the proxy's own resolvers; the engine's when empty.
	DNS []string
	// AllowPrivate lets allowed names resolve to private addresses (the
	// tests' stand-in servers); a weakening anywhere else.
	AllowPrivate bool
	// HostAddress leaves the host's address on the episode network's
	// bridge (no inhibit_ipv4), so every host listener is reachable from
	// the boxes: a weakening, for the probe proxy_host_unreachable.
	HostAddress bool
}

// ProxyMount is where the proxy binary appears in its container.
const ProxyMount = "/.mass/mass-egress-proxy"

const (
	kindEgress  = "egress"
	egressAgent = "_egress"
	// proxyUser is the proxy's uid:gid: neither an agent's nor the main
	// processes'.
	proxyUser = "65531:65531"
	// labelAllow records the allowlist and cap a proxy was made with.
	labelAllow = "mass.egress"
)

// inhibitIPv4 keeps the host's bridge without an address on a network.
const inhibitIPv4 = "com.docker.network.bridge.inhibit_ipv4"

func egressName(episode string) string { return "mass-egress-" + episode }

// egressState is the proxy of one episode as this runtime knows it.
type egressState struct {
	key    string            // allowlist and cap, as in labelAllow
	ip     string            // the proxy's address on the episode network
	agents map[string]string // agent address -> agent id
}

// egressTable holds the episodes' proxies; its lock serialises setup.
type egressTable struct {
	mu sync.Mutex
	m  map[string]*egressState
}

func egressKey(e sandbox.Egress) string {
	allow := append([]string(nil), e.Allow...)
	sort.Strings(allow)
	max := e.MaxBytes
	if max <= 0 {
		max = egress.DefaultMaxBytes
	}
	return strings.Join(allow, ",") + ";" + strconv.FormatInt(max, 10)
}

// applyEgress points a box at its episode's proxy, starting it first.
func (r *Runtime) applyEgress(ctx context.Context, episode string, e sandbox.Egress, hc *container.HostConfig, cfg *container.Config) error {
	if err := r.checkEgressRuntime(ctx, hc.Runtime); err != nil {
		return err
	}
	st, err := r.ensureEgress(ctx, episode, e)
	if err != nil {
		return err
	}
	hc.NetworkMode = container.NetworkMode(egressName(episode))
	hc.DNS = []string{st.ip}
	hc.DNSOptions = []string{"ndots:0"}
	cfg.NetworkDisabled = false
	url := "http://" + st.ip + ":" + strconv.Itoa(egress.ProxyPort)
	env := cfg.Env[:0:0]
	for _, kv := range cfg.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
			continue
		}
		env = append(env, kv)
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		env = append(env, k+"="+url)
	}
	sort.Strings(env)
	cfg.Env = env
	return nil
}

// egressRuntime is the OCI runtime of a box whose policy left the choice
// to auto: an egress box that auto resolved onto a runtime registered with
// --network=none (runsc for no-network boxes) runs on runc instead, and the
// log says so. A runtime the policy names is kept (checkEgressRuntime then
// refuses it with the reason).
func (r *Runtime) egressRuntime(ctx context.Context, spec sandbox.Spec, resolved string) string {
	if spec.Policy.Egress == nil || spec.Policy.Runtime != sandbox.RuntimeAuto || resolved == sandbox.RuntimeRunc {
		return resolved
	}
	if r.checkEgressRuntime(ctx, resolved) == nil {
		return resolved
	}
	r.log.Warn("egress box runs on runc: the auto runtime is registered without network", "episode", spec.Episode, "agent", spec.Agent, "auto", resolved)
	return sandbox.RuntimeRunc
}

// checkEgressRuntime refuses an OCI runtime registered with
// --network=none (gVisor's runsc for no-network boxes): it would give an
// egress box no network, failing every download for no visible reason.
func (r *Runtime) checkEgressRuntime(ctx context.Context, name string) error {
	info, err := r.cli.Info(ctx)
	if err != nil {
		return wrapErr("docker info", err)
	}
	if rt, ok := info.Runtimes[name]; ok && slices.Contains(rt.Args, "--network=none") {
		return fmt.Errorf("egress box: OCI runtime %q is registered with --network=none, which leaves an egress box without network; use runc or a runtime entry without it: %w", name, sandbox.ErrInvalid)
	}
	return nil
}

// ensureEgress returns the episode's proxy, making its network and
// container when they do not exist. Every box of an episode must ask for
// the same allowlist and cap.
func (r *Runtime) ensureEgress(ctx context.Context, episode string, e sandbox.Egress) (*egressState, error) {
	r.egress.mu.Lock()
	defer r.egress.mu.Unlock()
	key := egressKey(e)
	if st := r.egress.m[episode]; st != nil {
		if st.key != key {
			return nil, fmt.Errorf("egress of %s: every box of an episode must have the same allowlist and cap (have %q, asked %q): %w", episode, st.key, key, sandbox.ErrInvalid)
		}
		return st, nil
	}
	if r.cfg.Egress.ProxyPath == "" {
		return nil, fmt.Errorf("egress of %s: no egress proxy binary (build it with CGO_ENABLED=0 go build ./sandbox/egress/cmd/mass-egress-proxy and put it beside massd): %w", episode, sandbox.ErrUnavailable)
	}
	if err := r.ensureEgressNetwork(ctx, episode); err != nil {
		return nil, err
	}
	ip, err := r.startProxy(ctx, episode, e, key)
	if err != nil {
		return nil, err
	}
	st := &egressState{key: key, ip: ip, agents: map[string]string{}}
	if r.egress.m == nil {
		r.egress.m = map[string]*egressState{}
	}
	r.egress.m[episode] = st
	return st, nil
}

func (r *Runtime) ensureEgressNetwork(ctx context.Context, episode string) error {
	name := egressName(episode)
	opts := map[string]string{inhibitIPv4: "true"}
	if r.cfg.Egress.HostAddress {
		opts = map[string]string{}
	}
	if n, err := r.cli.NetworkInspect(ctx, name, network.InspectOptions{}); err == nil {
		if !n.Internal || n.Options[inhibitIPv4] != opts[inhibitIPv4] {
			return fmt.Errorf("egress network %s exists but is not internal without a host address; remove it: %w", name, sandbox.ErrInvalid)
		}
		return nil
	}
	_, err := r.cli.NetworkCreate(ctx, name, network.CreateOptions{
		Driver:   "bridge",
		Internal: true,
		Options:  opts,
		Labels:   r.labels(episode, egressAgent, kindEgress),
	})
	return wrapErr("create egress network "+name, err)
}

// proxyHostConfig is the proxy container's hardening.
func (r *Runtime) proxyHostConfig(episode string) (*container.HostConfig, error) {
	prof, err := massProfileJSON()
	if err != nil {
		return nil, fmt.Errorf("build the mass seccomp profile: %w", err)
	}
	init, pids := true, int64(128)
	return &container.HostConfig{
		NetworkMode:    container.NetworkMode(egressName(episode)),
		DNS:            append([]string(nil), r.cfg.Egress.DNS...),
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true", "seccomp=" + prof},
		ReadonlyRootfs: true,
		Init:           &init,
		IpcMode:        "private",
		MaskedPaths:    append([]string(nil), maskedPaths...),
		// Port 53 without CAP_NET_BIND_SERVICE: the sysctl is per network namespace.
		Sysctls:   map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"},
		LogConfig: container.LogConfig{Type: "json-file", Config: map[string]string{"max-size": "64m", "max-file": "1"}},
		Mounts: []mount.Mount{{Type: mount.TypeBind, Source: r.cfg.Egress.ProxyPath, Target: ProxyMount, ReadOnly: true,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}}},
		Resources: container.Resources{Memory: 256 << 20, MemorySwap: 256 << 20, NanoCPUs: 1e9, PidsLimit: &pids},
	}, nil
}

var _ sandbox.EgressLogger = (*Runtime)(nil)

// EgressProxyEnv overrides where the egress proxy binary is looked up.
const EgressProxyEnv = "MASS_EGRESS_PROXY"

// FindEgressProxy returns the static mass-egress-proxy: $MASS_EGRESS_PROXY,
// else beside the helper binary, else beside the running executable; ""
// when there is none (egress boxes then fail with ErrUnavailable).
func FindEgressProxy(helperPath string) string {
	if p := os.Getenv(EgressProxyEnv); p != "" {
		return p
	}
	var dirs []string
	if helperPath != "" {
		dirs = append(dirs, filepath.Dir(helperPath))
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "mass-egress-proxy")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// weaknesses are the report's warnings about the egress configuration.
func (c EgressConfig) weaknesses() []string {
	var w []string
	if c.AllowPrivate {
		w = append(w, "egress proxies may connect to private addresses (allow-private)")
	}
	if c.HostAddress {
		w = append(w, "egress networks keep a host address: host listeners are reachable from egress boxes")
	}
	return w
}

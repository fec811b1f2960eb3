package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/egress"
	"github.com/mass-dev/mass/sandbox/probe/check"
)

// EgressProbeCap is the byte cap of the egress probe episode.
const EgressProbeCap = 256 << 10

// EgressOptions configure one egress verify run.
type EgressOptions struct {
	// Runtime makes the boxes; it must implement sandbox.EgressLogger and
	// send its proxies to Standin (docker.EgressConfig{Network:
	// Standin.Network, DNS: {Standin.Address}, AllowPrivate: true}).
	Runtime sandbox.Runtime
	Engine  *client.Client
	Standin *Standin
	Probe   string // host path of the static mass-probe
	Image   string
	// Reference is the policy whose promises are checked; its Egress is
	// set to allow StandinAllowed with EgressProbeCap when nil.
	Reference sandbox.Policy
	Policy    sandbox.Policy // applied; Reference unless weakened
	// OuterNetwork also attaches the box to the stand-in's network (a
	// weakening: a raw network beside the proxy).
	OuterNetwork bool
	// HostAddress is docker.EgressConfig.HostAddress, which the caller
	// must give the runtime (WeakenEgress sets it before the runtime is made).
	HostAddress bool
}

// EgressWeakening is a hole in the egress setup and the probes it fails.
type EgressWeakening struct {
	Name  string
	Apply func(o *EgressOptions)
	Fails []string
}

// EgressWeakenings are the holes the egress probes must see.
var EgressWeakenings = []EgressWeakening{
	{"egress-outer-network", func(o *EgressOptions) { o.OuterNetwork = true }, []string{"proxy_direct_socket", "proxy_host_unreachable"}},
	{"egress-allow-denied", func(o *EgressOptions) {
		o.Policy.Egress.Allow = append(slices.Clone(o.Policy.Egress.Allow), StandinDenied)
	}, []string{"proxy_denied_name", "proxy_dns_exfil", "proxy_denied_recorded"}},
	{"egress-no-cap", func(o *EgressOptions) { o.Policy.Egress.MaxBytes = 1 << 30 }, []string{"proxy_byte_cap"}},
	{"egress-host-address", func(o *EgressOptions) { o.HostAddress = true }, []string{"proxy_host_unreachable"}},
}

// DefaultEgress is the reference egress policy of the probes.
func DefaultEgress() *sandbox.Egress {
	return &sandbox.Egress{Allow: []string{StandinAllowed}, MaxBytes: EgressProbeCap}
}

// RunEgress runs the egress probes: in-box checks through the episode's
// proxy, then host-side checks of the proxy's records and of what reached
// the stand-in.
func RunEgress(ctx context.Context, o EgressOptions) (Report, error) {
	if o.Reference.Egress == nil {
		o.Reference.Egress = DefaultEgress()
	}
	if o.Policy.Egress == nil {
		e := *o.Reference.Egress
		o.Policy.Egress = &e
	}
	logger, ok := o.Runtime.(sandbox.EgressLogger)
	if !ok || o.Standin == nil {
		return Report{}, fmt.Errorf("verify egress: the runtime keeps no egress records or no stand-in: %w", sandbox.ErrInvalid)
	}
	ep := "verify-egress-" + randHex(6)
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = o.Runtime.KillEpisode(cctx, ep)
		_ = o.Runtime.RemoveWorkspace(cctx, ep)
	}()
	secret := "exfil-" + randHex(8) + ".attacker.example"
	host, err := newHostListener()
	if err != nil {
		return Report{}, err
	}
	defer host.Close()
	results, err := egressInBox(ctx, o, ep, secret, host)
	if err != nil {
		return Report{}, err
	}
	var rep Report
	rep.add(results...)
	if err := o.Runtime.KillEpisode(ctx, ep); err != nil {
		return rep, err
	}
	recs, err := logger.EgressLog(ctx, ep)
	if err != nil {
		return rep, err
	}
	qs, err := o.Standin.Questions(ctx)
	if err != nil {
		return rep, err
	}
	rep.add(neverLeft(qs, secret), recorded(recs, o.Standin.Address, secret))
	return rep, nil
}

// egressInBox makes the box, copies the probe in and runs its checks.
func egressInBox(ctx context.Context, o EgressOptions, ep, secret string, host *hostListener) ([]check.Result, error) {
	if err := o.Runtime.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep, DiskBytes: ProbeWorkspaceBytes}, nil); err != nil {
		return nil, fmt.Errorf("verify egress: workspace: %w", err)
	}
	sb, err := o.Runtime.Create(ctx, sandbox.Spec{Episode: ep, Agent: "probe-a", Image: o.Image, Policy: o.Policy})
	if err != nil {
		return nil, fmt.Errorf("verify egress: box: %w", err)
	}
	if o.OuterNetwork {
		if err := o.Engine.NetworkConnect(ctx, o.Standin.Network, sb.ID(), nil); err != nil {
			return nil, fmt.Errorf("verify egress: weaken: %w", err)
		}
	}
	r := &run{o: Options{Probe: o.Probe}}
	if err := r.copyProbe(ctx, sb); err != nil {
		return nil, err
	}
	cfg := check.EgressConfig{Allowed: StandinAllowed, Denied: StandinDenied, Address: o.Standin.Address,
		Secret: secret, CapBytes: o.Reference.Egress.MaxBytes, Banner: "mass-standin",
		HostAddrs: host.addrs, HostPort: host.port}
	rs, _, err := r.exec(ctx, sb, 2*time.Minute, "egress", "-config", mustJSON(cfg))
	return rs, err
}

// neverLeft checks that the secret name's lookup never reached the
// stand-in's DNS (the proxy answered it), while the allowed name's did.
func neverLeft(qs []egress.Record, secret string) check.Result {
	var names []string
	leaked, allowed := false, false
	for _, q := range qs {
		names = append(names, q.Domain)
		leaked = leaked || strings.EqualFold(q.Domain, secret)
		allowed = allowed || q.Domain == StandinAllowed
	}
	return check.Result{Name: "proxy_dns_never_left", OK: !leaked && allowed,
		Expected: "the stand-in's DNS saw " + StandinAllowed + " (the proxy resolving it) and never " + secret,
		Observed: "questions: " + strings.Join(names, ", ")}
}

// recorded checks that the proxy's records name the agent and hold the
// allowed request and every refused one.
func recorded(recs []egress.Record, addr, secret string) check.Result {
	want := map[string]bool{"allowed " + StandinAllowed: false, "denied " + StandinDenied: false,
		"denied " + addr: false, "denied " + secret: false}
	var obs []string
	for _, r := range recs {
		verb := "denied"
		if r.Allowed {
			verb = "allowed"
		}
		k := verb + " " + r.Domain
		if _, ok := want[k]; ok && r.Agent == "probe-a" && (r.Kind != egress.KindDNS || !r.Allowed) {
			want[k] = true
		}
		obs = append(obs, fmt.Sprintf("%s %s %s %s %d", r.Agent, r.Kind, verb, r.Domain, r.Status))
	}
	ok := true
	for _, seen := range want {
		ok = ok && seen
	}
	return check.Result{Name: "proxy_denied_recorded", OK: ok,
		Expected: "records by probe-a of the allowed name and of the refused name, IP literal and secret lookup",
		Observed: fmt.Sprintf("%d records: %s", len(recs), strings.Join(obs, "; "))}
}

// copyProbe puts the probe binary into the workspace through sb.
func (r *run) copyProbe(ctx context.Context, sb sandbox.Sandbox) error {
	bin, err := os.ReadFile(r.o.Probe)
	if err != nil {
		return fmt.Errorf("verify: read probe binary: %w", err)
	}
	res, err := sb.Exec(ctx, sandbox.ExecRequest{
		Argv:  []string{"/bin/sh", "-c", "cat > " + probePath + " && chmod 755 " + probePath},
		Stdin: bytes.NewReader(bin), Timeout: time.Minute,
	})
	if err != nil || res.ExitCode != 0 {
		return fmt.Errorf("verify: copy probe into the workspace: exit %d %s: %w", res.ExitCode, res.Stderr, errors.Join(err, sandbox.ErrUnavailable))
	}
	return nil
}

// containerOutput reads a container's stdout and stderr.
func containerOutput(ctx context.Context, engine *client.Client, id string) (string, string, error) {
	rc, err := engine.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", "", err
	}
	defer rc.Close()
	var out, errb bytes.Buffer
	_, err = stdcopy.StdCopy(&out, &errb, io.LimitReader(rc, 64<<20))
	return out.String(), errb.String(), err
}

// GroupEgress selects the egress probes (RunEgress) in `massctl sandbox
// verify`; Run itself does not know it.
const GroupEgress = "egress"

// SplitEgress separates the egress weakenings from the others in names.
func SplitEgress(names []string) (other, egressNames []string) {
	for _, n := range names {
		n = strings.TrimSpace(n)
		if slices.ContainsFunc(EgressWeakenings, func(w EgressWeakening) bool { return w.Name == n }) {
			egressNames = append(egressNames, n)
		} else {
			other = append(other, n)
		}
	}
	return other, egressNames
}

// WeakenEgress applies the named egress weakenings and returns the probes
// expected to fail.
func WeakenEgress(o *EgressOptions, names []string) []string {
	var fails []string
	for _, w := range EgressWeakenings {
		if slices.Contains(names, w.Name) {
			w.Apply(o)
			fails = append(fails, w.Fails...)
		}
	}
	return fails
}

// hostListener accepts TCP on every host address, for proxy_host_unreachable.
type hostListener struct {
	net.Listener
	addrs []string
	port  int
}

func newHostListener() (*hostListener, error) {
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		return nil, fmt.Errorf("verify egress: host listener: %w", err)
	}
	h := &hostListener{Listener: l, port: l.Addr().(*net.TCPAddr).Port}
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				h.addrs = append(h.addrs, n.IP.String())
			}
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return h, nil
}

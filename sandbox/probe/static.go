package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/probe/check"
)

const helperMount = sandbox.HelperMount

// static runs the quick checks in agent A while agent B holds a marked
// process, and while the runner listens on the Docker bridge gateway.
func (r *run) static(ctx context.Context) error {
	cfg := r.config()
	gw := r.listenGateway(ctx)
	defer gw.close()
	cfg.Gateway, cfg.GatewayTCP, cfg.GatewayUDP = gw.addr, gw.tcpPort, gw.udpPort

	marker := "mass-probe-marker-" + randHex(8)
	cfg.Marker = markerHash(marker)
	hctx, stop := context.WithCancel(ctx)
	var held sync.WaitGroup
	held.Add(1)
	go func() {
		defer held.Done()
		r.b.Exec(hctx, sandbox.ExecRequest{Argv: []string{probePath, "hold", "-marker", marker, "-for", "5m"}, Timeout: 5 * time.Minute})
	}()
	defer func() { stop(); held.Wait() }()
	cfg.OtherHostPID = r.hostPID(ctx, r.b.ID(), marker)
	if cfg.GVisor() {
		// Agent B's processes live in another gVisor kernel: the number
		// to try is its sandbox's host pid.
		cfg.OtherHostPID = r.sandboxPID(ctx, r.b)
	}
	// A file op leaves agent A's helper session running for helper_not_traceable.
	if _, err := r.a.Files().Stat(ctx, "."); err != nil {
		return fmt.Errorf("start the file helper session of %s: %w", r.a.Agent(), err)
	}
	stopOps := r.askFileOps(ctx)
	rs, _, err := r.exec(ctx, r.a, 2*time.Minute, "static", "-config", mustJSON(cfg))
	asked, forged := stopOps()
	if err != nil {
		return err
	}
	r.report.add(rs...)
	r.report.add(check.Result{Name: "helper_forgery_refused", OK: forged == 0 && asked > 0,
		Expected: "no answer the agent wrote into the helper's output is believed (sessions are sealed)",
		Observed: fmt.Sprintf("%d file ops during the static checks, %d forged answers believed", asked, forged)})
	r.report.add(r.setuid(ctx))
	r.report.add(r.ipcPrivate(ctx))
	if gw.addr != "" {
		time.Sleep(200 * time.Millisecond) // let a late datagram arrive
		conns, bytes := gw.seen()
		r.report.add(check.Result{Name: "gateway_listener_silent", OK: conns == 0 && bytes == 0,
			Expected: "runner's listener on the Docker gateway receives nothing",
			Observed: fmt.Sprintf("%d connections/datagrams, %d bytes on %s (tcp %d, udp %d)", conns, bytes, gw.addr, gw.tcpPort, gw.udpPort)})
	}
	return nil
}

// askFileOps keeps asking agent A's file helper for a stat while the
// static checks run: helper_not_traceable forges answers where it can
// (helper_forgery_refused counts those believed), and under runsc a session
// helper_startup_race killed must not restart while agent code runs. The
// returned func stops, waits and says how many ops ran and how many forged
// answers came back.
func (r *run) askFileOps(ctx context.Context) func() (int, int) {
	var asked, forged int
	octx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for octx.Err() == nil {
			fi, err := r.a.Files().Stat(octx, ".")
			asked++
			if err == nil && fi.Path == check.ForgedPath {
				forged++
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() (int, int) { cancel(); <-done; return asked, forged }
}

// sandboxPID is the host pid of a box's main process (under runsc, its
// gVisor sandbox), 0 if unknown.
func (r *run) sandboxPID(ctx context.Context, sb sandbox.Sandbox) int {
	if r.o.Engine == nil {
		return 0
	}
	in, err := r.o.Engine.ContainerInspect(ctx, sb.ID())
	if err != nil || in.State == nil {
		return 0
	}
	return in.State.Pid
}

// ipcPrivate compares IPC namespaces: agent A's must differ from the
// host's and from agent B's, or System V IPC and /dev/shm are shared.
func (r *run) ipcPrivate(ctx context.Context) check.Result {
	const name, want = "ipc_private", "each agent has its own IPC namespace, distinct from the host's"
	host, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		return check.Result{Name: name, Expected: want, Observed: "read host ipc namespace: " + err.Error()}
	}
	ns := func(sb sandbox.Sandbox) string {
		if r.config().GVisor() {
			// Each runsc box is its own kernel; the host sees the IPC
			// namespace its sandbox process runs in.
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/ipc", r.sandboxPID(ctx, sb)))
			if err != nil {
				return ""
			}
			return l
		}
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"/bin/sh", "-c", "ls -l /proc/self/ns/ipc"}, Timeout: time.Minute, MaxBytes: 4096})
		if err != nil || res.ExitCode != 0 {
			return ""
		}
		f := strings.Fields(string(res.Stdout))
		if len(f) == 0 {
			return ""
		}
		return f[len(f)-1]
	}
	a, b := ns(r.a), ns(r.b)
	ok := a != "" && b != "" && a != host && a != b
	return check.Result{Name: name, OK: ok, Expected: want,
		Observed: fmt.Sprintf("agent A %s, agent B %s, host %s", orNone(a), orNone(b), host)}
}

// setuid plants a root-owned setuid copy of the probe in the workspace (from
// a short-lived root container, standing in for any way such a file could
// appear) and runs it as the agent: it must not gain uid 0 or capabilities.
func (r *run) setuid(ctx context.Context) check.Result {
	const name, want = "setuid_workspace", "a root-owned setuid file runs with the agent's uid and no capabilities"
	suid := sandbox.WorkspaceMount + "/.mass-probe-suid"
	pol := r.o.Policy
	pol.User, pol.CapAdd = "0:0", []string{"DAC_OVERRIDE"}
	// gVisor's gofer will not make a setuid file; the planter stands in
	// for any way one could appear, so it runs on runc.
	pol.Runtime = sandbox.RuntimeRunc
	planter, err := r.o.Runtime.Create(ctx, sandbox.Spec{Episode: r.episode, Agent: "probe-planter", Image: r.o.Image, Policy: pol})
	if err != nil {
		return check.Result{Name: name, Expected: want, Observed: "create planter container: " + err.Error()}
	}
	defer planter.Remove(context.WithoutCancel(ctx))
	res, err := planter.Exec(ctx, sandbox.ExecRequest{Argv: []string{"/bin/sh", "-c",
		"cp " + probePath + " " + suid + " && chmod 4755 " + suid + " && ls -ln " + suid}, Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		return check.Result{Name: name, Expected: want, Observed: fmt.Sprintf("plant setuid file: exit %d %s %v", res.ExitCode, res.Stderr, err)}
	}
	planted := strings.Join(strings.Fields(string(res.Stdout)), " ")
	res, err = r.a.Exec(ctx, sandbox.ExecRequest{Argv: []string{suid, "whoami"}, Timeout: time.Minute, MaxBytes: 4096})
	if err != nil || res.ExitCode != 0 {
		return check.Result{Name: name, Expected: want, Observed: fmt.Sprintf("run setuid file: exit %d %s %v", res.ExitCode, res.Stderr, err)}
	}
	var id check.Identity
	if err := json.Unmarshal(res.Stdout, &id); err != nil {
		return check.Result{Name: name, Expected: want, Observed: "decode whoami: " + err.Error()}
	}
	// No gain relative to the uid the agent actually runs as.
	uid, _, _ := sandbox.ParseUser(r.o.Policy.User)
	ok := id.EUID == uid && id.UID == uid && strings.Trim(id.CapEff, "0") == ""
	return check.Result{Name: name, OK: ok, Expected: want,
		Observed: fmt.Sprintf("planted %q; ran with uid=%d euid=%d CapEff=%s", short(planted, 60), id.UID, id.EUID, id.CapEff)}
}

// hostPID finds the host pid of the process whose argv carries marker,
// through the engine's `top`; 0 when it cannot be found.
func (r *run) hostPID(ctx context.Context, id, marker string) int {
	if r.o.Engine == nil {
		return 0
	}
	for i := 0; i < 50; i++ {
		top, err := r.o.Engine.ContainerTop(ctx, id, nil)
		if err == nil {
			pidCol := -1
			for j, t := range top.Titles {
				if t == "PID" {
					pidCol = j
				}
			}
			for _, p := range top.Processes {
				if pidCol >= 0 && pidCol < len(p) && strings.Contains(strings.Join(p, " "), marker) &&
					!strings.Contains(strings.Join(p, " "), "exec") {
					if pid, err := strconv.Atoi(p[pidCol]); err == nil {
						return pid
					}
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0
}

// gateway is the runner's own TCP and UDP listener on the bridge gateway:
// the only "egress" target a probe may actually reach when networking is on.
type gateway struct {
	addr             string
	tcpPort, udpPort int
	tl               net.Listener
	ul               net.PacketConn
	conns, bytes     atomic.Int64
	wg               sync.WaitGroup
}

func (r *run) listenGateway(ctx context.Context) *gateway {
	g := &gateway{}
	if r.o.Engine == nil {
		return g
	}
	nw, err := r.o.Engine.NetworkInspect(ctx, "bridge", network.InspectOptions{})
	if err != nil || len(nw.IPAM.Config) == 0 {
		r.log.Warn("no docker bridge network; gateway probes will report it", "err", err)
		return g
	}
	ip := bridgeGateway(nw.IPAM.Config[0].Gateway, nw.IPAM.Config[0].Subnet)
	if ip == "" {
		r.log.Warn("no docker bridge gateway address on this host", "subnet", nw.IPAM.Config[0].Subnet)
		return g
	}
	tl, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		r.log.Warn("listen on docker gateway", "addr", ip, "err", err)
		return g
	}
	ul, err := net.ListenPacket("udp", net.JoinHostPort(ip, "0"))
	if err != nil {
		tl.Close()
		r.log.Warn("listen on docker gateway", "addr", ip, "err", err)
		return g
	}
	g.addr, g.tl, g.ul = ip, tl, ul
	g.tcpPort = tl.Addr().(*net.TCPAddr).Port
	g.udpPort = ul.LocalAddr().(*net.UDPAddr).Port
	g.wg.Add(2)
	go func() {
		defer g.wg.Done()
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			g.conns.Add(1)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			g.bytes.Add(int64(n))
			c.Close()
		}
	}()
	go func() {
		defer g.wg.Done()
		buf := make([]byte, 64)
		for {
			n, _, err := ul.ReadFrom(buf)
			if err != nil {
				return
			}
			g.conns.Add(1)
			g.bytes.Add(int64(n))
		}
	}()
	return g
}

// bridgeGateway returns the engine's gateway address, or else the host
// address inside the bridge subnet (the default bridge often omits it).
func bridgeGateway(gw, subnet string) string {
	if gw != "" {
		return gw
	}
	_, n, err := net.ParseCIDR(subnet)
	if err != nil {
		return ""
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && n.Contains(ipn.IP) {
			return ipn.IP.String()
		}
	}
	return ""
}

func (g *gateway) seen() (int64, int64) { return g.conns.Load(), g.bytes.Load() }

func (g *gateway) close() {
	if g.tl != nil {
		g.tl.Close()
		g.ul.Close()
	}
	g.wg.Wait()
}

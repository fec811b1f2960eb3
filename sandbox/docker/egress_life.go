package docker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/egress"
)

// proxyReadyTimeout bounds the wait for a new proxy to listen.
const proxyReadyTimeout = 15 * time.Second

// startProxy makes and starts the episode's proxy and returns its address
// on the episode network. A proxy left by an earlier daemon run with the
// same allowlist is adopted; any other is replaced.
func (r *Runtime) startProxy(ctx context.Context, episode string, e sandbox.Egress, key string) (string, error) {
	name := egressName(episode)
	if c, err := r.cli.ContainerInspect(ctx, name); err == nil {
		if c.State != nil && c.State.Running && c.Config.Labels[labelAllow] == key && c.Config.Labels[LabelDaemon] == r.cfg.DaemonID {
			return proxyIP(c, name)
		}
		if err := r.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil && !isNotFound(err) {
			return "", wrapErr("replace egress proxy "+name, err)
		}
	}
	hc, err := r.proxyHostConfig(episode)
	if err != nil {
		return "", err
	}
	image := r.cfg.Egress.Image
	if image == "" {
		image = r.cfg.Image
	}
	max := e.MaxBytes
	if max <= 0 {
		max = egress.DefaultMaxBytes
	}
	args := []string{"-allow", strings.Join(e.Allow, ","), "-max-bytes", strconv.FormatInt(max, 10)}
	if r.cfg.Egress.AllowPrivate {
		args = append(args, "-allow-private")
	}
	labels := r.labels(episode, egressAgent, kindEgress)
	labels[labelAllow] = key
	cfg := &container.Config{Image: image, User: proxyUser, Entrypoint: []string{ProxyMount}, Cmd: args,
		Env: []string{}, WorkingDir: "/", Labels: labels, Hostname: "egress"}
	resp, err := r.cli.ContainerCreate(ctx, cfg, hc, nil, nil, name)
	if err != nil {
		return "", wrapErr("create egress proxy "+name, err)
	}
	ip, err := r.runProxy(ctx, resp.ID, name)
	if err != nil {
		_ = r.cli.ContainerRemove(context.WithoutCancel(ctx), resp.ID, container.RemoveOptions{Force: true})
		return "", err
	}
	return ip, nil
}

// runProxy joins the proxy to the outer network, starts it and waits until
// it listens.
func (r *Runtime) runProxy(ctx context.Context, id, name string) (string, error) {
	outer := r.cfg.Egress.Network
	if outer == "" {
		outer = "bridge"
	}
	if err := r.cli.NetworkConnect(ctx, outer, id, &network.EndpointSettings{}); err != nil {
		return "", wrapErr("connect egress proxy "+name+" to "+outer, err)
	}
	if err := r.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return "", wrapErr("start egress proxy "+name, err)
	}
	deadline := time.Now().Add(proxyReadyTimeout)
	for {
		_, stderr, err := r.proxyOutput(ctx, id)
		if err == nil && strings.Contains(stderr, "egress proxy ready") {
			break
		}
		c, ierr := r.cli.ContainerInspect(ctx, id)
		if ierr != nil {
			return "", wrapErr("inspect egress proxy "+name, ierr)
		}
		if !c.State.Running || time.Now().After(deadline) {
			return "", fmt.Errorf("egress proxy %s did not start (state %s): %s: %w", name, c.State.Status, strings.TrimSpace(stderr), sandbox.ErrUnavailable)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	c, err := r.cli.ContainerInspect(ctx, id)
	if err != nil {
		return "", wrapErr("inspect egress proxy "+name, err)
	}
	return proxyIP(c, name)
}

func proxyIP(c container.InspectResponse, name string) (string, error) {
	if c.NetworkSettings != nil {
		if ep := c.NetworkSettings.Networks[name]; ep != nil && ep.IPAddress != "" {
			return ep.IPAddress, nil
		}
	}
	return "", fmt.Errorf("egress proxy %s has no address on its episode network: %w", name, sandbox.ErrUnavailable)
}

// proxyOutput reads the proxy's stdout (records) and stderr (its log).
func (r *Runtime) proxyOutput(ctx context.Context, id string) (string, string, error) {
	rc, err := r.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", "", wrapErr("read egress proxy log", err)
	}
	defer rc.Close()
	var out, errb bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errb, io.LimitReader(rc, 128<<20)); err != nil {
		return out.String(), errb.String(), fmt.Errorf("read egress proxy log: %w", err)
	}
	return out.String(), errb.String(), nil
}

// noteEgressAgent remembers a new box's address, so that records name it.
func (r *Runtime) noteEgressAgent(ctx context.Context, id, episode, agent string) error {
	c, err := r.cli.ContainerInspect(ctx, id)
	if err != nil {
		return wrapErr("inspect egress box "+agent, err)
	}
	ep := c.NetworkSettings.Networks[egressName(episode)]
	if ep == nil || ep.IPAddress == "" {
		return fmt.Errorf("egress box %s/%s has no address on its episode network: %w", episode, agent, sandbox.ErrUnavailable)
	}
	r.egress.mu.Lock()
	defer r.egress.mu.Unlock()
	if st := r.egress.m[episode]; st != nil {
		st.agents[ep.IPAddress] = agent
	}
	return nil
}

// EgressLog returns the records of the episode's proxy with agents named.
func (r *Runtime) EgressLog(ctx context.Context, episode string) ([]egress.Record, error) {
	if !sandbox.ValidID(episode) {
		return nil, fmt.Errorf("egress log: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	out, _, err := r.proxyOutput(ctx, egressName(episode))
	if isNotFound(err) || err != nil && strings.Contains(err.Error(), "No such container") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs, err := egress.ParseRecords(strings.NewReader(out))
	if err != nil {
		return recs, err
	}
	r.egress.mu.Lock()
	defer r.egress.mu.Unlock()
	if st := r.egress.m[episode]; st != nil {
		for i := range recs {
			recs[i].Agent = st.agents[recs[i].Client]
		}
	}
	return recs, nil
}

// proxyStopGrace is how long a stopping proxy may take to record what was
// open (SIGTERM, then SIGKILL).
const proxyStopGrace = 1

// stopEgress stops the episode's proxy (it records open transfers on
// SIGTERM) and keeps it, with its records, until removeEgress.
func (r *Runtime) stopEgress(ctx context.Context, episode string) error {
	grace := proxyStopGrace
	err := r.cli.ContainerStop(ctx, egressName(episode), container.StopOptions{Signal: "TERM", Timeout: &grace})
	if err != nil && !isNotFound(err) && !isNotRunning(err) && !strings.Contains(err.Error(), "No such container") {
		return wrapErr("stop egress proxy of "+episode, err)
	}
	return nil
}

// removeEgress removes the episode's proxy networks and forgets its
// state; the proxy container goes with the episode's other containers.
func (r *Runtime) removeEgress(ctx context.Context, episode string) error {
	r.egress.mu.Lock()
	delete(r.egress.m, episode)
	r.egress.mu.Unlock()
	nets, err := r.cli.NetworkList(ctx, network.ListOptions{Filters: r.filter(episode, kindEgress)})
	if err != nil {
		return wrapErr("list egress networks of "+episode, err)
	}
	for _, n := range nets {
		if err := r.cli.NetworkRemove(ctx, n.ID); err != nil && !isNotFound(err) {
			return wrapErr("remove egress network "+n.Name, err)
		}
	}
	return nil
}

// egressNetworks lists this daemon's egress networks as Infos.
func (r *Runtime) egressNetworks(ctx context.Context, f filters.Args) ([]sandbox.Info, error) {
	f.Add("label", LabelKind+"="+kindEgress)
	nets, err := r.cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return nil, wrapErr("list egress networks", err)
	}
	var out []sandbox.Info
	for _, n := range nets {
		out = append(out, sandbox.Info{ID: n.Name, Kind: "network", Episode: n.Labels[LabelEpisode],
			Agent: n.Labels[LabelAgent], Daemon: n.Labels[LabelDaemon], State: "present", Created: n.Created})
	}
	return out, nil
}

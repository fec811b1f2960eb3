package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/egress"
)

// Names the stand-in internet serves: the egress probes allow the first
// only.
const (
	StandinAllowed = "data.standin.example"
	StandinDenied  = "other.standin.example"
	standinMount   = "/.mass/mass-probe"
	// standinIndexMount is where the package index's wheels appear.
	standinIndexMount = "/.mass/index"
)

// Standin is the stand-in internet of the egress probes: a container
// running `mass-probe standin` on an internal network of its own, which
// only the egress proxies under test join (docker.EgressConfig.Network,
// with its Address as the proxies' DNS).
type Standin struct {
	Network string // name of its network
	Address string // its address there
	id      string
	engine  *client.Client
}

// StartStandin makes the stand-in's network and container. labels go on
// both (the caller's mass labels, so that its reaper finds leftovers).
func StartStandin(ctx context.Context, engine *client.Client, probePath, image, name string, labels map[string]string) (*Standin, error) {
	return StartStandinIndex(ctx, engine, probePath, image, name, labels, "")
}

// StartStandinIndex is StartStandin whose stand-in also serves the wheels
// of the host folder indexDir (world-readable) as a package index at
// http://standin.IndexName/simple/; "" serves none.
func StartStandinIndex(ctx context.Context, engine *client.Client, probePath, image, name string, labels map[string]string, indexDir string) (*Standin, error) {
	s := &Standin{Network: name, engine: engine}
	if _, err := engine.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge", Internal: true, Labels: labels}); err != nil {
		return nil, fmt.Errorf("stand-in network: %w", err)
	}
	init := true
	hc := &container.HostConfig{
		NetworkMode: container.NetworkMode(name), CapDrop: []string{"ALL"}, ReadonlyRootfs: true, Init: &init,
		SecurityOpt: []string{"no-new-privileges:true"},
		Sysctls:     map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"},
		Mounts:      []mount.Mount{{Type: mount.TypeBind, Source: probePath, Target: standinMount, ReadOnly: true}},
	}
	cfg := &container.Config{Image: image, User: "65534:65534", Labels: labels, Hostname: "standin",
		Entrypoint: []string{standinMount, "standin", "-names", StandinAllowed + "," + StandinDenied}}
	if indexDir != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: indexDir, Target: standinIndexMount, ReadOnly: true})
		cfg.Entrypoint = append(cfg.Entrypoint, "-index", standinIndexMount)
	}
	resp, err := engine.ContainerCreate(ctx, cfg, hc, nil, nil, name)
	if err != nil {
		s.Close(ctx)
		return nil, fmt.Errorf("stand-in container: %w", err)
	}
	s.id = resp.ID
	if err := engine.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		s.Close(ctx)
		return nil, fmt.Errorf("start stand-in: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		s.Close(ctx)
		return nil, err
	}
	return s, nil
}

func (s *Standin) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, err := s.engine.ContainerInspect(ctx, s.id)
		if err != nil {
			return fmt.Errorf("inspect stand-in: %w", err)
		}
		_, logs, _ := containerOutput(ctx, s.engine, s.id)
		if ep := c.NetworkSettings.Networks[s.Network]; ep != nil && strings.Contains(logs, "standin ready") {
			s.Address = ep.IPAddress
			return nil
		}
		if !c.State.Running || time.Now().After(deadline) {
			return fmt.Errorf("stand-in did not start (%s): %s: %w", c.State.Status, logs, sandbox.ErrUnavailable)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Questions are the DNS questions that reached the stand-in.
func (s *Standin) Questions(ctx context.Context) ([]egress.Record, error) {
	out, _, err := containerOutput(ctx, s.engine, s.id)
	if err != nil {
		return nil, err
	}
	return egress.ParseRecords(strings.NewReader(out))
}

// Close removes the container and the network.
func (s *Standin) Close(ctx context.Context) error {
	var errs []error
	if s.id != "" {
		errs = append(errs, s.engine.ContainerRemove(ctx, s.id, container.RemoveOptions{Force: true}))
	}
	errs = append(errs, s.engine.NetworkRemove(ctx, s.Network))
	return errors.Join(errs...)
}

package docker

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/volume"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// The workspace is a named volume. When the policy caps the disk, the volume
// is a tmpfs of that size (the kernel enforces the cap with ENOSPC); the
// local driver unmounts a tmpfs volume — losing its data — when no container
// uses it, so a small keeper container holds it mounted for the episode's
// lifetime. The keeper is also where inputs are copied in, ownership and
// protected paths are set (it runs as root with CAP_CHOWN, CAP_FOWNER and
// CAP_DAC_READ_SEARCH only, no network, its own pid namespace), and the
// workspace is exported from. It never runs agent code.

// CreateWorkspace makes the episode volume, starts its keeper, copies the
// inputs in through the engine and applies ownership and protection.
func (r *Runtime) CreateWorkspace(ctx context.Context, ws sandbox.WorkspaceSpec, inputs []sandbox.Input) (err error) {
	if err := boxhost.CheckWorkspace(ws, inputs, sandbox.ValidID); err != nil {
		return err
	}
	pol := boxhost.WorkspacePolicy(r.cfg.Policy, ws)
	opts := map[string]string{}
	if pol.DiskBytes > 0 && r.cfg.DiskMode == DiskTmpfs {
		opts = map[string]string{"type": "tmpfs", "device": "tmpfs",
			"o": "size=" + strconv.FormatInt(pol.DiskBytes, 10) + ",nosuid,nodev,mode=0755"}
	}
	name := volumeName(ws.Episode)
	// VolumeCreate returns an existing volume as is; refuse instead, or the
	// cleanup below would destroy a live episode's workspace.
	if _, err := r.cli.VolumeInspect(ctx, name); err == nil {
		return fmt.Errorf("create workspace: %s already exists: %w", ws.Episode, sandbox.ErrInvalid)
	} else if !isNotFound(err) {
		return wrapErr("inspect volume "+name, err)
	}
	if _, err := r.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Driver: "local",
		DriverOpts: opts, Labels: r.labels(ws.Episode, keeperAgent, kindWorkspace)}); err != nil {
		return wrapErr("create volume "+name, err)
	}
	defer func() {
		if err != nil {
			_ = r.RemoveWorkspace(context.WithoutCancel(ctx), ws.Episode)
		}
	}()
	if _, err := r.startKeeper(ctx, ws.Episode, pol); err != nil {
		return err
	}
	if len(inputs) > 0 {
		if err := r.copyIn(ctx, ws.Episode, "inputs", func(w io.Writer) error { return boxhost.WriteInputsTar(w, inputs, pol.DiskBytes) }); err != nil {
			return err
		}
	}
	if err := r.prepare(ctx, ws.Episode, pol.User, ws.Protected); err != nil {
		return err
	}
	if pol.DiskBytes > 0 && r.cfg.DiskMode == DiskMonitor {
		r.startMonitor(ws.Episode, pol.DiskBytes)
	}
	return nil
}

func (r *Runtime) startKeeper(ctx context.Context, episode string, pol sandbox.Policy) (string, error) {
	kp := pol
	kp.Runtime = r.cfg.Policy.Runtime
	kp.CapDrop = []string{"ALL"}
	// DAC_READ_SEARCH lets the disk monitor measure directories an agent
	// made unreadable.
	kp.CapAdd = []string{"CHOWN", "FOWNER", "DAC_READ_SEARCH"}
	kp.NetworkMode = "none"
	kp.ReadOnlyRootfs = true
	kp.NoNewPrivileges = true
	kp.MemoryBytes = 64 << 20
	kp.NanoCPUs = 500_000_000
	kp.PidsLimit = 32
	hc, err := hostConfig(kp, volumeName(episode), r.helperFor(kp.Runtime))
	if err != nil {
		return "", err
	}
	// The keeper writes the inputs into the volume: their pages are its.
	kp.TmpfsBytes = 0
	if r.cfg.DiskMode == DiskTmpfs {
		chargeTmpfs(hc, kp, pol.DiskBytes)
	} else {
		chargeTmpfs(hc, kp, 0)
	}
	cfg := &container.Config{
		Image:           r.cfg.Image,
		User:            "0:0", // root with the three capabilities above: it sets ownership
		Entrypoint:      []string{HelperMount},
		Cmd:             []string{"pause"},
		WorkingDir:      sandbox.WorkspaceMount,
		Labels:          r.labels(episode, keeperAgent, kindWorkspace),
		NetworkDisabled: true,
		Hostname:        "workspace",
	}
	resp, err := r.cli.ContainerCreate(ctx, cfg, hc, nil, nil, keeperName(episode))
	if err != nil {
		return "", wrapErr("create workspace keeper for "+episode, err)
	}
	if err := r.startContainer(ctx, resp.ID, kp.Runtime, "start workspace keeper for "+episode); err != nil {
		return "", err
	}
	return resp.ID, nil
}

// RemoveWorkspace removes every container of the episode, then its volume.
func (r *Runtime) RemoveWorkspace(ctx context.Context, episode string) error {
	if !sandbox.ValidID(episode) {
		return fmt.Errorf("remove workspace: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	r.stopMonitor(episode)
	if err := r.removeContainers(ctx, episode, ""); err != nil {
		return err
	}
	if err := r.cli.VolumeRemove(ctx, volumeName(episode), true); err != nil && !isNotFound(err) {
		return wrapErr("remove volume "+volumeName(episode), err)
	}
	return r.removeEgress(ctx, episode)
}

package docker

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/volume"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
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
	if !sandbox.ValidID(ws.Episode) {
		return fmt.Errorf("create workspace: episode id %q: %w", ws.Episode, sandbox.ErrInvalid)
	}
	for _, p := range ws.Protected {
		if _, err := helper.CleanRel(p); err != nil {
			return fmt.Errorf("create workspace %s: protected: %v: %w", ws.Episode, err, sandbox.ErrInvalid)
		}
	}
	for _, in := range inputs {
		if _, err := helper.CleanRel(in.Dest); err != nil {
			return fmt.Errorf("create workspace %s: input %s: %v: %w", ws.Episode, in.HostPath, err, sandbox.ErrInvalid)
		}
	}
	pol := r.cfg.Policy
	if ws.DiskBytes > 0 {
		pol.DiskBytes = ws.DiskBytes
	}
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
	keeper, err := r.startKeeper(ctx, ws.Episode, pol)
	if err != nil {
		return err
	}
	if len(inputs) > 0 {
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeInputsTar(pw, inputs, pol.DiskBytes)) }()
		err := r.cli.CopyToContainer(ctx, keeper, sandbox.WorkspaceMount, pr, container.CopyToContainerOptions{})
		pr.CloseWithError(err)
		if err != nil {
			return wrapErr("copy inputs into "+ws.Episode, err)
		}
	}
	argv := []string{HelperMount, "prepare", "-owner", pol.User}
	for _, p := range ws.Protected {
		argv = append(argv, "-protect", p)
	}
	res, err := r.execRaw(ctx, keeper, execOpts{argv: argv, user: "0", maxBytes: 64 << 10})
	if err != nil {
		return fmt.Errorf("prepare workspace %s: %w", ws.Episode, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("prepare workspace %s: helper exit %d: %q: %w", ws.Episode, res.ExitCode, res.Stderr, sandbox.ErrInvalid)
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

// writeInputsTar streams host inputs as a tar. The host side is trusted, yet
// symlinks and special files are refused rather than followed.
func writeInputsTar(w io.Writer, inputs []sandbox.Input, capBytes int64) error {
	tw := tar.NewWriter(w)
	var total int64
	dirs := map[string]bool{}
	addDirs := func(rel string) error {
		for d := path.Dir(rel); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, in := range inputs {
		dest, _ := helper.CleanRel(in.Dest)
		err := filepath.WalkDir(in.HostPath, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(in.HostPath, p)
			name := path.Join(dest, filepath.ToSlash(rel))
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case fi.IsDir():
				if dirs[name] {
					return nil
				}
				if err := addDirs(name); err != nil {
					return err
				}
				dirs[name] = true
				return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: fi.ModTime()})
			case fi.Mode().IsRegular():
				total += fi.Size()
				if capBytes > 0 && total > capBytes {
					return fmt.Errorf("inputs exceed the workspace cap of %d bytes: %w", capBytes, sandbox.ErrTooLarge)
				}
				if err := addDirs(name); err != nil {
					return err
				}
				return copyFileTar(tw, p, name, fi)
			}
			return fmt.Errorf("input %s is not a regular file or directory: %w", p, sandbox.ErrInvalid)
		})
		if err != nil {
			return fmt.Errorf("input %s: %w", in.HostPath, err)
		}
	}
	return tw.Close()
}

func copyFileTar(tw *tar.Writer, p, name string, fi fs.FileInfo) error {
	f, err := os.OpenFile(p, os.O_RDONLY|nofollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	mode := int64(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: fi.Size(), Mode: mode, ModTime: fi.ModTime()}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, fi.Size())
	return err
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

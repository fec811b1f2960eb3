package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/mass-dev/mass/sandbox"
)

// GPUConfig says which NVIDIA devices and driver libraries a box with
// Policy.GPUs may get. The NVIDIA container toolkit is not in Debian, so
// the devices and libraries are passed through the HostConfig directly.
type GPUConfig struct {
	// Max is the most devices one box may get; 0 (the default) refuses every
	// box that asks for a GPU.
	Max int
	// DevDir holds the device nodes; "/dev" when empty.
	DevDir string
	// LibDirs are the host folders searched for the driver's user-space
	// libraries (libcuda.so*, libnvidia-*.so*); DefaultGPULibDirs when nil.
	// Each library is bind-mounted read-only at its host path.
	LibDirs []string
}

// DefaultGPULibDirs are where Debian and Ubuntu driver packages, and the
// runfile installer, put the driver's libraries.
var DefaultGPULibDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"}

// gpuControlNodes are passed, when the host has them, to every GPU box.
var gpuControlNodes = []string{"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}

// gpuLibGlobs are the driver libraries a GPU box gets.
var gpuLibGlobs = []string{"libcuda.so*", "libnvidia-*.so*"}

// applyGPUs gives a box its policy's GPUs: refused above the cap, and on a
// runsc registered without --nvproxy; nothing changes for GPUs 0.
func (r *Runtime) applyGPUs(ctx context.Context, hc *container.HostConfig, p sandbox.Policy) error {
	if p.GPUs == 0 {
		return nil
	}
	if p.GPUs > r.cfg.GPU.Max {
		return fmt.Errorf("create sandbox: the task asks for %d GPUs and massd allows %d per box (sandbox.max_gpus): %w", p.GPUs, r.cfg.GPU.Max, sandbox.ErrDenied)
	}
	if p.Runtime == sandbox.RuntimeRunsc {
		info, err := r.cli.Info(ctx)
		if err != nil {
			return wrapErr("docker info", err)
		}
		if msg := nvproxyProblem(info.Runtimes[sandbox.RuntimeRunsc].Args); msg != "" {
			return fmt.Errorf("create sandbox: %s: %w", msg, sandbox.ErrUnavailable)
		}
	}
	return gpuHostConfig(hc, p.GPUs, r.cfg.GPU)
}

// nvproxyProblem says why a runsc registered with args cannot run a GPU
// box, or returns "": gVisor passes NVIDIA devices through only with
// --nvproxy.
func nvproxyProblem(args []string) string {
	for _, a := range args {
		if a == "--nvproxy" || a == "--nvproxy=true" || a == "-nvproxy" || a == "-nvproxy=true" {
			return ""
		}
	}
	return "a GPU box needs runc, or a runsc registered with --nvproxy (runtimeArgs in daemon.json); the engine's runsc has args [" + strings.Join(args, " ") + "]"
}

// gpuHostConfig adds n devices (/dev/nvidia0..n-1), the control nodes the
// host has and read-only mounts of the driver libraries to hc.
func gpuHostConfig(hc *container.HostConfig, n int, cfg GPUConfig) error {
	dev := cfg.DevDir
	if dev == "" {
		dev = "/dev"
	}
	nodes := make([]string, 0, n+len(gpuControlNodes))
	for i := 0; i < n; i++ {
		name := "nvidia" + strconv.Itoa(i)
		if _, err := os.Stat(filepath.Join(dev, name)); err != nil {
			return fmt.Errorf("create sandbox: %d GPUs asked for, but the host has no %s: %w", n, filepath.Join(dev, name), sandbox.ErrUnavailable)
		}
		nodes = append(nodes, name)
	}
	for _, name := range gpuControlNodes {
		if _, err := os.Stat(filepath.Join(dev, name)); err == nil {
			nodes = append(nodes, name)
		}
	}
	for _, name := range nodes {
		hc.Devices = append(hc.Devices, container.DeviceMapping{PathOnHost: filepath.Join(dev, name), PathInContainer: "/dev/" + name, CgroupPermissions: "rw"})
	}
	libs, err := gpuLibraries(cfg.LibDirs)
	if err != nil {
		return err
	}
	for _, l := range libs {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: l, Target: l, ReadOnly: true,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRPrivate}})
	}
	return nil
}

// gpuLibraries lists the driver libraries in dirs: the names, symbolic
// links included (the engine mounts what they point at), that resolve to
// regular files. None found is an error: a device without its driver
// library is of no use.
func gpuLibraries(dirs []string) ([]string, error) {
	if dirs == nil {
		dirs = DefaultGPULibDirs
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range dirs {
		for _, g := range gpuLibGlobs {
			m, err := filepath.Glob(filepath.Join(d, g))
			if err != nil {
				return nil, fmt.Errorf("gpu libraries: %w", err)
			}
			for _, p := range m {
				st, err := os.Stat(p)
				if errors.Is(err, fs.ErrNotExist) || err == nil && !st.Mode().IsRegular() || seen[p] {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("gpu libraries: %w", err)
				}
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("create sandbox: no NVIDIA driver library (libcuda.so*) in %s: %w", strings.Join(dirs, ", "), sandbox.ErrUnavailable)
	}
	sort.Strings(out)
	return out, nil
}

package docker

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
)

// fakeGPUHost builds a /dev tree with four GPUs, nvidiactl and nvidia-uvm
// (no nvidia-uvm-tools) plus nvidia-modeset, which no box gets, and a
// library folder with the driver's libraries (one a symbolic link) and
// one unrelated library.
func fakeGPUHost(t *testing.T) GPUConfig {
	t.Helper()
	root := t.TempDir()
	dev, lib := filepath.Join(root, "dev"), filepath.Join(root, "lib")
	for _, d := range []string{dev, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm", "nvidia-modeset", "null"} {
		if err := os.WriteFile(filepath.Join(dev, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"libcuda.so.550.54", "libnvidia-ml.so.550.54", "libm.so.6"} {
		if err := os.WriteFile(filepath.Join(lib, n), []byte("elf"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("libcuda.so.550.54", filepath.Join(lib, "libcuda.so.1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("missing.so", filepath.Join(lib, "libnvidia-gone.so.1")); err != nil {
		t.Fatal(err)
	}
	return GPUConfig{Max: 4, DevDir: dev, LibDirs: []string{lib, filepath.Join(root, "absent")}}
}

func gpuView(hc *container.HostConfig) (devs, mounts []string) {
	for _, d := range hc.Devices {
		devs = append(devs, d.PathOnHost+">"+d.PathInContainer+":"+d.CgroupPermissions)
	}
	for _, m := range hc.Mounts[3:] {
		mounts = append(mounts, m.Source+">"+m.Target+":"+map[bool]string{true: "ro", false: "rw"}[m.ReadOnly])
	}
	return devs, mounts
}

// TestGPUHostConfig: a box granted N GPUs carries exactly /dev/nvidia0..N-1,
// the control nodes the host has and the driver libraries read-only; a box
// without the limit carries none. (HostConfig level: the GPU machine this
// project borrows has no Docker engine.)
func TestGPUHostConfig(t *testing.T) {
	cfg := fakeGPUHost(t)
	dev, lib := cfg.DevDir, cfg.LibDirs[0]
	libs := []string{lib + "/libcuda.so.1>" + lib + "/libcuda.so.1:ro", lib + "/libcuda.so.550.54>" + lib + "/libcuda.so.550.54:ro",
		lib + "/libnvidia-ml.so.550.54>" + lib + "/libnvidia-ml.so.550.54:ro"}
	ctl := []string{dev + "/nvidiactl>/dev/nvidiactl:rw", dev + "/nvidia-uvm>/dev/nvidia-uvm:rw"}
	for _, tt := range []struct {
		n    int
		devs []string
	}{
		{1, append([]string{dev + "/nvidia0>/dev/nvidia0:rw"}, ctl...)},
		{2, append([]string{dev + "/nvidia0>/dev/nvidia0:rw", dev + "/nvidia1>/dev/nvidia1:rw"}, ctl...)},
	} {
		p := sandbox.DefaultPolicy()
		p.GPUs = tt.n
		hc, err := hostConfig(p, "vol", "/opt/helper")
		if err != nil {
			t.Fatal(err)
		}
		if err := gpuHostConfig(hc, p.GPUs, cfg); err != nil {
			t.Fatal(err)
		}
		devs, mounts := gpuView(hc)
		if !reflect.DeepEqual(devs, tt.devs) || !reflect.DeepEqual(mounts, libs) {
			t.Errorf("%d GPUs:\n devices %q\n want    %q\n mounts %q\n want   %q", tt.n, devs, tt.devs, mounts, libs)
		}
		if hc.Privileged || len(hc.DeviceCgroupRules)+len(hc.DeviceRequests) != 0 {
			t.Errorf("%d GPUs: privileged or cgroup rules: %+v", tt.n, hc)
		}
	}
	// Without the limit nothing is added, even on a GPU host.
	r := &Runtime{cfg: Config{GPU: cfg}}
	hc, err := hostConfig(sandbox.DefaultPolicy(), "vol", "/opt/helper")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.applyGPUs(t.Context(), hc, sandbox.DefaultPolicy()); err != nil {
		t.Fatal(err)
	}
	if devs, mounts := gpuView(hc); len(devs)+len(mounts) != 0 {
		t.Errorf("no GPU limit, yet devices %q mounts %q", devs, mounts)
	}
}

func TestGPURefusals(t *testing.T) {
	cfg := fakeGPUHost(t)
	hc := &container.HostConfig{}
	if err := gpuHostConfig(hc, 5, cfg); !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "nvidia4") {
		t.Errorf("5 GPUs on a 4-GPU host: %v", err)
	}
	noLib := cfg
	noLib.LibDirs = []string{t.TempDir()}
	if err := gpuHostConfig(&container.HostConfig{}, 1, noLib); !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "libcuda") {
		t.Errorf("no driver library: %v", err)
	}
	for _, max := range []int{0, 1} {
		c := cfg
		c.Max = max
		r := &Runtime{cfg: Config{GPU: c}}
		p := sandbox.DefaultPolicy()
		p.GPUs = 2
		err := r.applyGPUs(t.Context(), &container.HostConfig{}, p)
		if !errors.Is(err, sandbox.ErrDenied) || !strings.Contains(err.Error(), "sandbox.max_gpus") {
			t.Errorf("cap %d, 2 GPUs: %v", max, err)
		}
	}
	p := sandbox.DefaultPolicy()
	p.GPUs = sandbox.MaxGPUs + 1
	if err := p.Validate(); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("gpus %d validated: %v", p.GPUs, err)
	}
}

func TestNvproxyProblem(t *testing.T) {
	for _, args := range [][]string{{"--nvproxy"}, {"--platform=systrap", "--nvproxy=true"}} {
		if msg := nvproxyProblem(args); msg != "" {
			t.Errorf("%q: %s", args, msg)
		}
	}
	for _, args := range [][]string{nil, {"--platform=systrap"}, {"--nvproxy=false"}, {"--nvproxy-docker"}} {
		if msg := nvproxyProblem(args); !strings.Contains(msg, "--nvproxy") {
			t.Errorf("%q accepted for a GPU box: %q", args, msg)
		}
	}
}

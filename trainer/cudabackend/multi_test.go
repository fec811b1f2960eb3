//go:build masscuda || masscudaemu

package cudabackend

import (
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/cuda/device"
)

// TestHybridDevices runs the hybrid parity on one device, on a two-stage pipeline (devices
// 0,1: layers split, activations and their gradients moved by peer copies) and on two
// data-parallel replicas (devices 0,1, --replicas 2: windows dealt, gradients summed by
// peer copies), and checks that the split changes nothing: the pipeline does the one
// device's arithmetic in the same order (bit for bit), the replicas sum the same fp32
// gradients in another order. Without GPUs the devices are the emulator's.
func TestHybridDevices(t *testing.T) {
	if d, err := device.Open(1, nil); err != nil {
		t.Skipf("a second device: %v", err)
	} else {
		d.Close()
	}
	cfg, m := hybridModel(t)
	opt := DefaultOptions()
	opt.Attention = AttnTC
	if checkAttention(cfg, AttnTC) != nil {
		opt.Attention = AttnFlash
	}
	one := hybridParity(t, cfg, m, opt, "1 dev")
	for _, c := range []struct {
		label    string
		devices  []int
		replicas int
		tol      float64
	}{
		{"pipeline 0,1", []int{0, 1}, 1, 0},
		{"2 replicas", []int{0, 1}, 2, 1e-6},
	} {
		t.Run(c.label, func(t *testing.T) {
			o := opt
			o.Devices, o.Replicas = c.devices, c.replicas
			got := hybridParity(t, cfg, m, o, c.label)
			what := opt.Attention + " " + c.label
			report(t, what, "vs 1 dev: losses", cuda.RelErr(got.losses, one.losses), c.tol)
			report(t, what, "vs 1 dev: step 0 grads", cuda.RelErr(got.grads0, one.grads0), c.tol)
		})
	}
}

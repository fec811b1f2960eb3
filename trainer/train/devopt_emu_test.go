//go:build masscudaemu && !masscuda

package train

import (
	"context"
	"math"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/cudabackend"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
)

// hostOnly hides the CUDA backend's DeviceOptimizer, so the loop optimizes on the host.
type hostOnly struct{ trainer.Backend }

// countedDevice is the CUDA backend counting its device optimizer steps.
type countedDevice struct {
	*cudabackend.Backend
	steps *int
}

func (c countedDevice) OptimizerStep(ctx context.Context, lr float64) (float64, error) {
	*c.steps++
	return c.Backend.OptimizerStep(ctx, lr)
}

// TestDeviceOptimizerInLoop runs the training loop on the emulated CUDA backend twice,
// with its device optimizer and with the same backend optimizing on the host, and requires
// equal losses, gradient norms and checkpoints (adapter and moments): the loop must use
// the device step and pull the state back before it saves.
func TestDeviceOptimizerInLoop(t *testing.T) {
	base := toySetup(t, 3)
	base.Backend, base.Batch, base.CkptEvery, base.ValEvery = cudabackend.Name, 1, 0, 0
	base.Optim.Clip = 0.05 // active in every step
	var devSteps int
	opt := cudabackend.DefaultOptions()
	opt.Attention = cudabackend.AttnFlash // the emulator runs it far faster than the clear path
	newDev := func(m *model.Model, a *lora.Adapter) (trainer.Backend, error) {
		b, err := cudabackend.Open(m.Config, m, a, 0, opt)
		return countedDevice{b, &devSteps}, err
	}
	newHost := func(m *model.Model, a *lora.Adapter) (trainer.Backend, error) {
		b, err := cudabackend.Open(m.Config, m, a, 0, opt)
		return hostOnly{b}, err
	}
	hostCfg := base
	hostCfg.Out = base.Out + "-host"
	for _, r := range []struct {
		cfg Config
		f   trainer.Factory
	}{{base, newDev}, {hostCfg, newHost}} {
		if _, err := Run(context.Background(), r.cfg, Options{Backends: map[string]trainer.Factory{cudabackend.Name: r.f}}); err != nil {
			t.Fatal(err)
		}
	}
	if devSteps != base.Steps {
		t.Fatalf("device optimizer ran %d steps, want %d", devSteps, base.Steps)
	}
	dl, hl := stepLosses(t, base.Out), stepLosses(t, hostCfg.Out)
	for i := range hl {
		if math.Abs(dl[i]-hl[i]) > 1e-3*math.Abs(hl[i]) {
			t.Errorf("step %d: loss %v with the device optimizer, %v on the host", i+1, dl[i], hl[i])
		}
	}
	load := func(out string) (*lora.Adapter, *optim.AdamW) {
		mc, _ := model.Preset("micro")
		a, err := lora.New(base.LoRA, mc, base.Seed)
		if err != nil {
			t.Fatal(err)
		}
		o := optim.NewAdamW(base.Optim, a)
		if _, ok, err := loadLatest(out, a, o); err != nil || !ok {
			t.Fatalf("load checkpoint of %s: ok %v, %v", out, ok, err)
		}
		return a, o
	}
	da, do := load(base.Out)
	ha, ho := load(hostCfg.Out)
	if do.Steps != ho.Steps || do.Steps != int64(base.Steps) {
		t.Fatalf("checkpointed optimizer steps: device %d, host %d, want %d", do.Steps, ho.Steps, base.Steps)
	}
	var dv, hv, dm, hm []float32
	for i, p := range ha.Params {
		dv, hv = append(dv, da.Params[i].Data...), append(hv, p.Data...)
		dm, hm = append(dm, do.V[p.Name]...), append(hm, ho.V[p.Name]...)
	}
	if e := cuda.RelErr(dv, hv); !(e <= 1e-4) {
		t.Errorf("checkpointed adapter: relative error %.3g between device and host optimizer", e)
	}
	if e := cuda.RelErr(dm, hm); !(e <= 1e-3) {
		t.Errorf("checkpointed second moments: relative error %.3g", e)
	}
}

//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
)

func flatMoments(a *lora.Adapter, ms map[string][]float32) []float32 {
	var out []float32
	for _, p := range a.Params {
		out = append(out, ms[p.Name]...)
	}
	return out
}

func flatData(a *lora.Adapter) []float32 {
	var out []float32
	for _, p := range a.Params {
		out = append(out, p.Data...)
	}
	return out
}

// TestDeviceOptimizerParity trains the same model twice on the CUDA backend, once with the
// host optimizer (optim.ClipGradNorm + optim.AdamW over Param.Grad) and once with the
// device optimizer started after one host step (so it resumes non-zero moments), and
// compares gradient norms, losses, masters and moments. The clip bound is below the norm,
// so clipping is active in every step.
func TestDeviceOptimizerParity(t *testing.T) {
	cfg, m := parityModel(t, "qwen3")
	ws := parityWindows(rand.New(rand.NewPCG(41, 42)), cfg.VocabSize, 1, 16)
	ctx := context.Background()
	oc := optim.DefaultConfig(3)
	oc.LR, oc.Warmup, oc.Beta2, oc.WeightDecay, oc.Clip = 1e-2, 0, 0.95, 0.01, 0.05
	type run struct {
		a    *lora.Adapter
		o    *optim.AdamW
		b    *Backend
		loss []float64
		norm []float64
	}
	mk := func() *run {
		a := parityAdapter(t, cfg)
		opt := DefaultOptions()
		opt.Attention = AttnFlash // the emulator runs it far faster than the clear path
		b, err := Open(cfg, m, a, 0, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return &run{a: a, o: optim.NewAdamW(oc, a), b: b}
	}
	host, dev := mk(), mk()
	const steps = 3
	for step := 0; step < steps; step++ {
		lr := oc.LRAt(step)
		for _, r := range []*run{host, dev} {
			r.a.ZeroGrad()
			wl, err := r.b.ForwardBackward(ctx, trainer.Batch{Windows: ws, Seed: uint64(step)}, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			r.loss = append(r.loss, wl[0].Loss)
			var norm float64
			if r == dev && step > 0 {
				norm, err = r.b.OptimizerStep(ctx, lr)
			} else {
				norm = optim.ClipGradNorm(r.a.Params, oc.Clip)
				err = r.o.Step(r.a.Params, lr)
			}
			if err != nil {
				t.Fatal(err)
			}
			r.norm = append(r.norm, norm)
		}
		if step == 0 {
			if err := dev.b.StartOptimizer(dev.o); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := dev.b.PullOptimizer(dev.o); err != nil {
		t.Fatal(err)
	}
	if dev.o.Steps != host.o.Steps {
		t.Fatalf("device optimizer reports %d steps, host %d", dev.o.Steps, host.o.Steps)
	}
	for step := range steps {
		if math.Abs(dev.norm[step]-host.norm[step]) > 1e-3*host.norm[step] || host.norm[step] <= oc.Clip {
			t.Errorf("step %d: grad norm device %v, host %v (clip %v must be active)", step, dev.norm[step], host.norm[step], oc.Clip)
		}
		if math.Abs(dev.loss[step]-host.loss[step]) > 1e-3*math.Abs(host.loss[step]) {
			t.Errorf("step %d: loss device %v, host %v", step, dev.loss[step], host.loss[step])
		}
	}
	for _, c := range []struct {
		name      string
		got, want []float32
		tol       float64
	}{
		{"masters", flatData(dev.a), flatData(host.a), 1e-4},
		{"first moments", flatMoments(dev.a, dev.o.M), flatMoments(host.a, host.o.M), 1e-3},
		{"second moments", flatMoments(dev.a, dev.o.V), flatMoments(host.a, host.o.V), 1e-3},
	} {
		e := cuda.RelErr(c.got, c.want)
		fmt.Printf("DEVOPT %-16s rel err %.3e (tol %.0e)\n", c.name, e, c.tol)
		if !(e <= c.tol) {
			t.Errorf("%s: relative error %.3g exceeds %.0e", c.name, e, c.tol)
		}
	}
	// The device updates moved the masters: compare with where step 0 left them.
	if moved := cuda.RelErr(flatData(dev.a), flatData(parityAdapter(t, cfg))); moved < 1e-3 {
		t.Fatalf("masters moved by only %.3g after %d steps", moved, steps)
	}
}

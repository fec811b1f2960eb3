package reference

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/export"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/refbackend"
	"github.com/mass-dev/mass/trainer/safetensors"
)

var update = flag.Bool("update", false, "regenerate testdata/ref from the PyTorch reference")

// stateDir regenerates the debug state when /usr/bin/python3 has torch and
// otherwise falls back to the checked-in copy, saying which in the log.
func stateDir(t *testing.T, arch string) string {
	t.Helper()
	checkedIn := filepath.Join("testdata", "ref", arch)
	if ver, ok := TorchAvailable(); ok {
		dir := t.TempDir()
		if *update {
			dir = checkedIn
			os.RemoveAll(dir)
		}
		if err := Generate(Script(arch), arch, dir); err != nil {
			t.Fatal(err)
		}
		t.Logf("reference: regenerated with %s (torch %s) into %s", Python, ver, dir)
		return dir
	}
	if _, err := os.Stat(filepath.Join(checkedIn, "debug.json")); err != nil {
		t.Fatalf("reference: %s lacks torch and no checked-in state at %s", Python, checkedIn)
	}
	t.Logf("reference: %s has no torch; using the CHECKED-IN state %s", Python, checkedIn)
	return checkedIn
}

func relErr(got, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den)
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

type fixture struct {
	modelDir string
	dbg      *Debug
	adapter  *lora.Adapter
	backend  trainer.Backend
	ref      *safetensors.File
}

func load(t *testing.T, arch string) *fixture {
	t.Helper()
	dir := stateDir(t, arch)
	dbg, err := ReadDebug(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.Load(filepath.Join(dir, "model"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := lora.New(dbg.LoRAConfig(), m.Config, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Load(filepath.Join(dir, "lora_init.safetensors")); err != nil {
		t.Fatal(err)
	}
	be, err := refbackend.New(m, a)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := safetensors.Open(filepath.Join(dir, "ref.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close(); be.Close() })
	return &fixture{modelDir: filepath.Join(dir, "model"), dbg: dbg, adapter: a, backend: be, ref: ref}
}

// TestParity compares the reference backend with the PyTorch debug state of each
// variant. Both sides compute in float64; LoRA masters and AdamW state are
// float32 on both sides.
func TestParity(t *testing.T) {
	for _, arch := range Archs {
		t.Run(arch, func(t *testing.T) { parity(t, arch) })
	}
}

func parity(t *testing.T, arch string) {
	f := load(t, arch)
	ctx := context.Background()
	ws := f.dbg.TrainerWindows()

	t.Run("logits", func(t *testing.T) {
		for i, w := range ws {
			got, err := f.backend.Logits(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := f.ref.Float32s(fmt.Sprintf("logits_%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if e := relErr(f64s(got), f64s(want)); e > 1e-5 {
				t.Errorf("window %d logits: relative error %.3g > 1e-5", i, e)
			} else {
				t.Logf("window %d logits: relative error %.3g (compared as float32)", i, e)
			}
		}
	})

	t.Run("loss_and_grads", func(t *testing.T) {
		f.adapter.ZeroGrad()
		wl, err := f.backend.ForwardBackward(ctx, trainer.Batch{Windows: ws}, 1/float64(len(ws)))
		if err != nil {
			t.Fatal(err)
		}
		var mean float64
		for i, l := range wl {
			if got, want := l.Loss, f.dbg.WindowLosses[i]; math.Abs(got-want) > 1e-5*math.Abs(want) {
				t.Errorf("window %d loss = %.10g, want %.10g", i, got, want)
			}
			mean += l.Loss / float64(len(wl))
		}
		if got, want := mean, f.dbg.Loss; math.Abs(got-want) > 1e-5*math.Abs(want) {
			t.Errorf("loss = %.10g, want %.10g", got, want)
		}
		t.Logf("loss %.10g (reference %.10g)", mean, f.dbg.Loss)
		worst := 0.0
		for _, p := range f.adapter.Params {
			want, _, err := f.ref.Float32s("grad:" + p.Name)
			if err != nil {
				t.Fatal(err)
			}
			e := relErr(f64s(p.Grad), f64s(want))
			worst = math.Max(worst, e)
			if e > 1e-4 {
				t.Errorf("grad %s: relative error %.3g > 1e-4", p.Name, e)
			}
		}
		t.Logf("worst LoRA gradient relative error %.3g over %d tensors", worst, len(f.adapter.Params))
	})

	t.Run("adamw_10_steps", func(t *testing.T) {
		if err := f.adapter.Load(filepath.Join(filepath.Dir(f.ref.Path), "lora_init.safetensors")); err != nil {
			t.Fatal(err)
		}
		oc := f.dbg.OptimConfig()
		opt := optim.NewAdamW(oc, f.adapter)
		for s, want := range f.dbg.StepLosses {
			f.adapter.ZeroGrad()
			wl, err := f.backend.ForwardBackward(ctx, trainer.Batch{Windows: ws}, 1/float64(len(ws)))
			if err != nil {
				t.Fatal(err)
			}
			var got float64
			for _, l := range wl {
				got += l.Loss / float64(len(wl))
			}
			if math.Abs(got-want) > 1e-4*math.Abs(want) {
				t.Errorf("step %d loss = %.8g, want %.8g", s, got, want)
			}
			t.Logf("step %d loss %.8f reference %.8f", s, got, want)
			optim.ClipGradNorm(f.adapter.Params, oc.Clip)
			if err := opt.Step(f.adapter.Params, oc.LRAt(s)); err != nil {
				t.Fatal(err)
			}
		}
	})

	// The trained adapter, exported in PEFT's layout, must give PyTorch the
	// logits the reference backend computes with it: key names, [r,in]/[out,r]
	// orientation and scaling read by an independent implementation.
	t.Run("peft_export_in_torch", func(t *testing.T) {
		if _, ok := TorchAvailable(); !ok {
			t.Skip("reference: no torch; PEFT export cross-check needs /usr/bin/python3 with torch")
		}
		dir := t.TempDir()
		if err := export.WriteAdapter(filepath.Join(dir, "adapter"), f.adapter, "tiny"); err != nil {
			t.Fatal(err)
		}
		wj, err := json.Marshal(f.dbg.Windows)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "windows.json"), wj, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "logits.safetensors")
		if err := AdapterLogits(Script(arch), f.modelDir, filepath.Join(dir, "adapter"), filepath.Join(dir, "windows.json"), out); err != nil {
			t.Fatal(err)
		}
		tl, err := safetensors.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer tl.Close()
		for i, w := range ws {
			got, err := f.backend.Logits(ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := tl.Float32s(fmt.Sprintf("logits_%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if e := relErr(f64s(got), f64s(want)); e > 1e-5 {
				t.Errorf("window %d: torch logits with the exported adapter differ by %.3g", i, e)
			}
		}
	})
}

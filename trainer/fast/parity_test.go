package fast

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/refbackend"
)

// Tolerances of float32 on OpenBLAS against the float64 reference.
const (
	tolLoss = 2e-5
	tolGrad = 2e-4
)

// tolerances of one parity case: step-0 loss and gradients, the losses of
// ten AdamW steps and the logits after them.
type tolerances struct{ loss, grad, steps, logits float64 }

var denseTol = tolerances{tolLoss, tolGrad, tolLoss, tolGrad}

// hybridTol is looser after step 0: the random hybrids are ill-conditioned
// (the gated RMSNorm and L2 norms rescale small vectors), so that the float64
// reference itself moves its LoRA gradients by 2e-5 when its weights get
// noise of float32 rounding size (6e-8), and AdamW's normalized steps turn
// such differences in small gradient entries into O(lr) parameter changes.
var hybridTol = tolerances{tolLoss, 1e-3, 2e-3, 3e-2}

func windows(r *rand.Rand, vocab, n, t int) []trainer.Window {
	ws := make([]trainer.Window, n)
	for i := range ws {
		ids, labels := make([]int32, t), make([]int32, t)
		for j := range ids {
			ids[j] = int32(r.IntN(vocab))
			labels[j] = ids[j]
			if j < t/4 || j%7 == 3 {
				labels[j] = trainer.IgnoreIndex
			}
		}
		ws[i] = trainer.Window{InputIDs: ids, Labels: labels}
	}
	return ws
}

// testModel is a random preset model as Qwen3 or, for "qwen2", as Qwen2 with
// q/k/v biases as large as the projections' outputs.
func testModel(t *testing.T, preset, arch string) *model.Model {
	cfg, err := model.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	if arch == "qwen2" {
		cfg.Arch, cfg.ModelType, cfg.AttentionBias = model.Qwen2, "qwen2", true
		cfg.Architectures = []string{"Qwen2ForCausalLM"}
	}
	m := model.NewRandom(cfg, 11)
	if cfg.AttentionBias {
		r := rand.New(rand.NewPCG(14, 15))
		for l := 0; l < cfg.NumLayers; l++ {
			for _, mod := range []string{"q_proj", "k_proj", "v_proj"} {
				b := m.Get(model.LayerName(l, lora.ModulePath(mod)+".bias"))
				for i := range b.Data {
					b.Data[i] = float32(r.NormFloat64())
				}
			}
		}
	}
	return m
}

// testAdapter has non-zero B, so that A's gradients are not trivially zero.
func testAdapter(t *testing.T, cfg *model.Config, dropout float64) *lora.Adapter {
	lc := lora.DefaultConfig()
	lc.Rank, lc.Alpha, lc.Dropout = 8, 16, dropout
	if cfg.Hybrid != nil {
		lc.Targets = nil
		for _, mod := range lora.HybridTargets() {
			for l := 0; l < cfg.NumLayers; l++ {
				if lora.Exists(cfg, l, mod) {
					lc.Targets = append(lc.Targets, mod)
					break
				}
			}
		}
	}
	a, err := lora.New(lc, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 5))
	for _, p := range a.Params {
		if p.Shape[1] == lc.Rank {
			for i := range p.Data {
				p.Data[i] = float32(r.NormFloat64() * 0.05)
			}
		}
	}
	return a
}

func TestParity(t *testing.T) {
	cases := []struct {
		preset, arch string
		t            int
		dropout      float64
	}{
		{"micro", "qwen3", 150, 0.1}, {"micro", "qwen2", 150, 0}, {"tiny", "qwen3", 24, 0}, {"tiny", "qwen2", 24, 0.1},
		// Qwen3.5/3.6 hybrids: 150 tokens span three 64-token chunks of the gated delta rule.
		{"hybrid-micro", "", 150, 0.1}, {"hybrid-tiny", "", 24, 0},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%s/T%d/dropout%g", c.preset, c.arch, c.t, c.dropout), func(t *testing.T) {
			m := testModel(t, c.preset, c.arch)
			tol := denseTol
			if m.Config.Hybrid != nil {
				tol = hybridTol
			}
			parity(t, m, m, windows(rand.New(rand.NewPCG(12, 13)), m.Config.VocabSize, 2, c.t), c.dropout, tol)
		})
	}
}

// parity trains the reference backend on m and the cpu backend on mf (the same weights,
// possibly held as bf16) side by side.
func parity(t *testing.T, m, mf *model.Model, ws []trainer.Window, dropout float64, tol tolerances) {
	ctx := context.Background()
	ar, af := testAdapter(t, m.Config, dropout), testAdapter(t, m.Config, dropout)
	rb, err := refbackend.New(m, ar)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := New(mf, af)
	if err != nil {
		t.Fatal(err)
	}
	const steps = 10
	or, of := optim.NewAdamW(optim.DefaultConfig(steps), ar), optim.NewAdamW(optim.DefaultConfig(steps), af)
	worst := 0.0
	for step := 0; step < steps; step++ {
		ar.ZeroGrad()
		af.ZeroGrad()
		batch := trainer.Batch{Windows: ws, Seed: uint64(step)}
		lr, err := rb.ForwardBackward(ctx, batch, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		lf, err := fb.ForwardBackward(ctx, batch, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		for i := range lr {
			if lr[i].Tokens != lf[i].Tokens {
				t.Fatalf("step %d window %d: %d supervised tokens on reference, %d on cpu", step, i, lr[i].Tokens, lf[i].Tokens)
			}
			worst = math.Max(worst, math.Abs(lf[i].Loss-lr[i].Loss)/math.Abs(lr[i].Loss))
		}
		if step == 0 {
			check(t, "step 0 loss", worst, tol.loss)
			check(t, "step 0 lora grads", relErr(grads(af), grads(ar)), tol.grad)
		}
		for _, s := range []struct {
			o *optim.AdamW
			a *lora.Adapter
		}{{or, ar}, {of, af}} {
			if err := s.o.Step(s.a.Params, 1e-3); err != nil {
				t.Fatal(err)
			}
		}
	}
	check(t, fmt.Sprintf("%d-step losses (max)", steps), worst, tol.steps)
	ev, _ := rb.Loss(ctx, ws)
	ef, _ := fb.Loss(ctx, ws)
	check(t, "eval loss", math.Abs(ef[0].Loss-ev[0].Loss)/ev[0].Loss, tol.steps)
	gr, err := rb.Logits(ctx, ws[0])
	if err != nil {
		t.Fatal(err)
	}
	gf, err := fb.Logits(ctx, ws[0])
	if err != nil {
		t.Fatal(err)
	}
	check(t, "logits", relErr(gf, gr), tol.logits)
}

func check(t *testing.T, what string, got, tol float64) {
	t.Helper()
	t.Logf("%-22s relative error %.3e (tolerance %.0e)", what, got, tol)
	if !(got <= tol) {
		t.Errorf("%s: relative error %.3g exceeds %.0e", what, got, tol)
	}
}

func grads(a *lora.Adapter) []float32 {
	var g []float32
	for _, p := range a.Params {
		g = append(g, p.Grad...)
	}
	return g
}

// relErr is ‖got-want‖/‖want‖.
func relErr(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) {
			return math.Inf(1)
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	return math.Sqrt(num / den)
}

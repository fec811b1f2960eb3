//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/refbackend"
)

var (
	parityPreset = flag.String("parity-preset", "tiny", "model preset for the reference-vs-CUDA parity test")
	paritySteps  = flag.Int("parity-steps", 10, "optimizer steps compared in the parity test")
)

// Parity tolerances: bf16 weights and activations against the float64 reference.
const (
	tolLoss = 1e-2
	tolGrad = 5e-2
)

func parityWindows(r *rand.Rand, vocab, n, t int) []trainer.Window {
	ws := make([]trainer.Window, n)
	for i := range ws {
		ids := make([]int32, t)
		labels := make([]int32, t)
		for j := range ids {
			ids[j] = int32(r.IntN(vocab))
			labels[j] = ids[j]
			if j < t/4 {
				labels[j] = trainer.IgnoreIndex
			}
		}
		ws[i] = trainer.Window{InputIDs: ids, Labels: labels}
	}
	return ws
}

// parityAdapter returns an adapter with dropout off (the backends draw different masks)
// and non-zero B, so that A's gradients are not trivially zero.
func parityAdapter(t *testing.T, cfg *model.Config) *lora.Adapter {
	lc := lora.DefaultConfig()
	lc.Rank, lc.Alpha, lc.Dropout = 8, 16, 0
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

func gradsOf(a *lora.Adapter) []float32 {
	var g []float32
	for _, p := range a.Params {
		g = append(g, p.Grad...)
	}
	return g
}

// parityModel returns random weights for the preset as a Qwen3 model or, for "qwen2", as
// a Qwen2 model: q/k/v projections with bias and no q/k norm. The biases are drawn as
// large as the projections' outputs (real Qwen2 checkpoints carry large q/k biases), so
// that a backend which drops them fails the comparison.
func parityModel(t *testing.T, arch string) (*model.Config, *model.Model) {
	cfg, err := model.Preset(*parityPreset)
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
	return cfg, m
}

func TestParityTiny(t *testing.T) {
	for _, arch := range []string{"qwen3", "qwen2"} {
		t.Run(arch, func(t *testing.T) { parity(t, arch) })
	}
}

func parity(t *testing.T, arch string) {
	cfg, m := parityModel(t, arch)
	r := rand.New(rand.NewPCG(12, 13))
	windows := parityWindows(r, cfg.VocabSize, 2, 40)
	ctx := context.Background()
	for _, attn := range []string{AttnTC, AttnClear, AttnFlash} {
		t.Run(attn, func(t *testing.T) {
			if attn == AttnTC && checkAttention(cfg, AttnTC) != nil {
				t.Skipf("preset %s: head_dim %d has no tensor-core kernel (run -parity-preset tiny)", *parityPreset, cfg.HeadDim)
			}
			ac, ag := parityAdapter(t, cfg), parityAdapter(t, cfg)
			cb, err := refbackend.New(m, ac)
			if err != nil {
				t.Fatal(err)
			}
			defer cb.Close()
			opt := DefaultOptions()
			opt.Attention = attn
			gb, err := Open(cfg, m, ag, 0, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			if lw := gb.w.layers[0]; lw.qkv == nil || lw.gateUp == nil {
				t.Error("q/k/v or gate/up A matrices did not stack: parity would miss the stacked products")
			}
			oc := optim.NewAdamW(optim.DefaultConfig(*paritySteps), ac)
			og := optim.NewAdamW(optim.DefaultConfig(*paritySteps), ag)
			var lc, lg []float32
			for step := 0; step < *paritySteps; step++ {
				ac.ZeroGrad()
				ag.ZeroGrad()
				batch := trainer.Batch{Windows: windows, Seed: uint64(step)}
				wc, err := cb.ForwardBackward(ctx, batch, 0.5)
				if err != nil {
					t.Fatal(err)
				}
				wg, err := gb.ForwardBackward(ctx, batch, 0.5)
				if err != nil {
					t.Fatal(err)
				}
				for i := range wc {
					lc = append(lc, float32(wc[i].Loss))
					lg = append(lg, float32(wg[i].Loss))
					if wc[i].Tokens != wg[i].Tokens {
						t.Errorf("step %d window %d: %d supervised tokens on reference, %d on cuda", step, i, wc[i].Tokens, wg[i].Tokens)
					}
				}
				if step == 0 {
					ge := cuda.RelErr(gradsOf(ag), gradsOf(ac))
					report(t, attn, arch+" step 0 loss", cuda.RelErr(lg, lc), tolLoss)
					report(t, attn, arch+" step 0 lora grads", ge, tolGrad)
				}
				for _, s := range []struct {
					o *optim.AdamW
					a *lora.Adapter
				}{{oc, ac}, {og, ag}} {
					if err := s.o.Step(s.a.Params, 1e-3); err != nil {
						t.Fatal(err)
					}
				}
			}
			worst := 0.0
			for i := range lc {
				worst = math.Max(worst, math.Abs(float64(lg[i]-lc[i]))/math.Abs(float64(lc[i])))
			}
			report(t, attn, fmt.Sprintf("%s %d-step losses (max)", arch, *paritySteps), worst, tolLoss)
			t.Logf("losses reference %v", lc)
			t.Logf("losses cuda %v", lg)
		})
	}
}

func report(t *testing.T, attn, what string, got, tol float64) {
	t.Helper()
	status := "ok"
	if !(got <= tol) {
		status = "FAIL"
		t.Errorf("parity %s %s: relative error %.3g exceeds %.0e", attn, what, got, tol)
	}
	fmt.Printf("PARITY %-6s %-24s %10.3e %8.0e %s\n", attn, what, got, tol, status)
}

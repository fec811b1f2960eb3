//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
)

var (
	benchShapes = flag.String("shapes", "0.6b,4b", "Qwen3 shapes to benchmark with random weights (0.6b, 4b, or a model preset)")
	benchSeq    = flag.Int("seq", 4096, "tokens per window in the benchmark")
	benchPeak   = flag.Float64("peak-tflops", DefaultPeakTFLOPs, "dense bf16 peak for MFU")
	benchAttn   = flag.String("attn", "", "attention for the benchmark (auto|tc|clear|flash; default from MASS_CUDA_ATTN)")
	benchDrop   = flag.Float64("lora-dropout", lora.DefaultDropout, "LoRA dropout in the benchmark (0 lets q/k/v and gate/up run as stacked products)")
	benchOpt    = flag.String("bench-opt", "device", "optimizer step per iteration: device (the loop's default on this backend), host, or none")
)

// BenchmarkTrainStep times ForwardBackward of one window of -seq tokens on random
// full-size Qwen3 shapes with the paper's adapter (r 64, alpha 128, dropout 0.05, all seven
// projections), plus the optimizer step the training loop takes (-bench-opt: device = clip and
// AdamW on the GPU; host = the adapter's upload, the gradients' download and clip + AdamW on
// the CPU; none = ForwardBackward alone, still with the per-call copies).
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range strings.Split(*benchShapes, ",") {
		cfg, ok := Qwen3Shape(name)
		if !ok {
			var err error
			if cfg, err = model.Preset(name); err != nil { // small presets for smoke runs
				b.Fatalf("shape %q: neither 0.6b/4b nor a model preset: %v", name, err)
			}
		}
		lc := lora.DefaultConfig()
		lc.Dropout = *benchDrop
		a, err := lora.New(lc, cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		opt := DefaultOptions()
		if *benchAttn != "" {
			opt.Attention = *benchAttn
		}
		be, err := Open(cfg, nil, a, 7, opt)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		ids := make([]int32, *benchSeq)
		for i := range ids {
			ids[i] = int32(r.IntN(cfg.VocabSize))
		}
		batch := trainer.Batch{Windows: []trainer.Window{{InputIDs: ids, Labels: ids}}}
		ctx := context.Background()
		step := benchStep(b, be, a)
		if _, err := be.ForwardBackward(ctx, batch, 1); err != nil { // warm-up: JIT, allocator, handles
			be.Close()
			b.Fatal(err)
		}
		variant := be.attnFor(*benchSeq)
		if *benchDrop == 0 {
			variant += "-nodrop"
		}
		b.Run(fmt.Sprintf("qwen3-%s/seq%d/%s", name, *benchSeq, variant), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				batch.Seed = uint64(i)
				if _, err := be.ForwardBackward(ctx, batch, 1); err != nil {
					b.Fatal(err)
				}
				if err := step(ctx); err != nil {
					b.Fatal(err)
				}
			}
			tps := float64(b.N**benchSeq) / b.Elapsed().Seconds()
			b.ReportMetric(tps, "tokens/s")
			b.ReportMetric(MFU(cfg, *benchSeq, tps, *benchPeak), "MFU")
		})
		if err := be.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStep returns the per-iteration optimizer step selected by -bench-opt.
func benchStep(b *testing.B, be *Backend, a *lora.Adapter) func(context.Context) error {
	oc := optim.DefaultConfig(1000)
	o := optim.NewAdamW(oc, a)
	switch *benchOpt {
	case "device":
		if err := be.StartOptimizer(o); err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context) error { _, err := be.OptimizerStep(ctx, oc.LR); return err }
	case "host":
		return func(context.Context) error {
			optim.ClipGradNorm(a.Params, oc.Clip)
			err := o.Step(a.Params, oc.LR)
			a.ZeroGrad()
			return err
		}
	case "none":
		return func(context.Context) error { return nil }
	}
	b.Fatalf("-bench-opt %q: want device, host or none", *benchOpt)
	return nil
}

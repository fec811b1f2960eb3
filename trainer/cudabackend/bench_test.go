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
)

var (
	benchShapes = flag.String("shapes", "0.6b,4b", "Qwen3 shapes to benchmark with random weights (0.6b, 4b, or a model preset)")
	benchSeq    = flag.Int("seq", 4096, "tokens per window in the benchmark")
	benchPeak   = flag.Float64("peak-tflops", DefaultPeakTFLOPs, "dense bf16 peak for MFU")
	benchAttn   = flag.String("attn", "", "attention for the benchmark (clear|flash; default from MASS_CUDA_ATTN)")
)

// BenchmarkTrainStep times ForwardBackward of one window of -seq tokens on random
// full-size Qwen3 shapes with the paper's adapter (r 64, alpha 128, dropout 0.05, all seven
// projections), including the adapter's upload and the gradients' download.
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range strings.Split(*benchShapes, ",") {
		cfg, ok := Qwen3Shape(name)
		if !ok {
			var err error
			if cfg, err = model.Preset(name); err != nil { // small presets for smoke runs
				b.Fatalf("shape %q: neither 0.6b/4b nor a model preset: %v", name, err)
			}
		}
		a, err := lora.New(lora.DefaultConfig(), cfg, 1)
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
		if _, err := be.ForwardBackward(ctx, batch, 1); err != nil { // warm-up: JIT, allocator, handles
			be.Close()
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("qwen3-%s/seq%d", name, *benchSeq), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				batch.Seed = uint64(i)
				if _, err := be.ForwardBackward(ctx, batch, 1); err != nil {
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

package fast

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// layer27B is one Gated DeltaNet layer (with its MLP) of Qwen3.6-27B's shape,
// in a one-layer model with a 256-token vocabulary so that the head is
// negligible.
func layer27B() *model.Config {
	c, _ := model.Preset("hybrid-micro")
	c.VocabSize, c.HiddenSize, c.IntermediateSize, c.NumLayers = 256, 5120, 17408, 1
	c.NumHeads, c.NumKVHeads, c.HeadDim = 24, 4, 256
	h := *c.Hybrid
	h.KeyHeads, h.ValueHeads, h.KeyDim, h.ValueDim, h.RotaryDim = 16, 48, 128, 128, 64
	h.LayerTypes = []string{model.LinearAttention}
	c.Hybrid = &h
	return c
}

// BenchmarkHybridLayer reports training tokens per second and per CPU-second
// (user+system time of all threads) of ForwardBackward with LoRA r=8 on every
// target: hybrid-micro (three Gated DeltaNet layers, one gated attention) and
// one Qwen3.6-27B-shaped Gated DeltaNet layer.
func BenchmarkHybridLayer(b *testing.B) {
	cases := []struct {
		name string
		cfg  func() *model.Config
		seq  int
	}{
		{"hybrid-micro/seq1024", func() *model.Config { c, _ := model.Preset("hybrid-micro"); return c }, 1024},
		{"27b-deltanet-layer/seq256", layer27B, 256},
	}
	for _, cs := range cases {
		b.Run(cs.name, func(b *testing.B) {
			cfg := cs.cfg()
			m := model.NewRandom(cfg, 1)
			var targets []string
			for _, t := range lora.HybridTargets() {
				if lora.Exists(cfg, 0, t) || lora.Exists(cfg, cfg.NumLayers-1, t) {
					targets = append(targets, t)
				}
			}
			a, err := lora.New(lora.Config{Rank: 8, Alpha: 16, Dropout: 0.05, Targets: targets}, cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			be, err := New(m, a)
			if err != nil {
				b.Fatal(err)
			}
			w := trainer.Window{InputIDs: make([]int32, cs.seq), Labels: make([]int32, cs.seq)}
			for i := range w.InputIDs {
				w.InputIDs[i] = int32(i*7) % 256
				w.Labels[i] = w.InputIDs[i]
			}
			ctx := context.Background()
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := be.ForwardBackward(ctx, trainer.Batch{Windows: []trainer.Window{w}, Seed: uint64(i)}, 1); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuTime() - c0
			b.ReportMetric(float64(cs.seq*b.N)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(cs.seq*b.N)/cpu.Seconds(), "tok/cpu-s")
		})
	}
}

// BenchmarkGDNChunked reports tokens per CPU-second of the chunked gated
// delta rule alone (forward and backward) at Qwen3.6-27B's 16 key and 48
// value heads of 128.
func BenchmarkGDNChunked(b *testing.B) {
	initBLAS()
	for _, T := range []int{512, 2048} {
		b.Run(fmt.Sprintf("27b-heads/T%d", T), func(b *testing.B) {
			p := GDN{T: T, KeyHeads: 16, ValueHeads: 48, KeyDim: 128, ValueDim: 128, Scale: 0.088}
			q, k := make([]float32, T*16*128), make([]float32, T*16*128)
			v, do := make([]float32, T*48*128), make([]float32, T*48*128)
			g, beta := make([]float32, T*48), make([]float32, T*48)
			for i := range q {
				q[i], k[i] = 0.088, 0.088
			}
			for i := range v {
				v[i], do[i] = float32(i%7)-3, 0.1
			}
			for i := range g {
				g[i], beta[i] = -0.1, 0.5
			}
			b.ResetTimer()
			c0 := cpuTime()
			for i := 0; i < b.N; i++ {
				_, _, entry := p.Forward(q, k, v, g, beta, nil)
				p.Backward(q, k, v, g, beta, entry, do, nil)
			}
			cpu := cpuTime() - c0
			b.ReportMetric(float64(T*b.N)/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(float64(T*b.N)/cpu.Seconds(), "tok/cpu-s")
		})
	}
}

package refbackend

import (
	"context"
	"fmt"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// BenchmarkForwardBackward reports training tokens/s of the micro preset.
func BenchmarkForwardBackward(b *testing.B) {
	for _, seq := range []int{64, 256} {
		b.Run(fmt.Sprintf("micro/seq%d", seq), func(b *testing.B) {
			cfg, _ := model.Preset("micro")
			m := model.NewRandom(cfg, 1)
			a, _ := lora.New(lora.Config{Rank: 8, Alpha: 16, Dropout: 0.05, Targets: lora.Modules}, cfg, 1)
			be, _ := New(m, a)
			w := trainer.Window{InputIDs: make([]int32, seq), Labels: make([]int32, seq)}
			for i := range w.InputIDs {
				w.InputIDs[i] = int32(i*7) % 256
				w.Labels[i] = w.InputIDs[i]
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := be.ForwardBackward(ctx, trainer.Batch{Windows: []trainer.Window{w}, Seed: uint64(i)}, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(seq*b.N)/b.Elapsed().Seconds(), "tok/s")
		})
	}
}

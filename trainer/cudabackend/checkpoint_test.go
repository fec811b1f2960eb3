//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/cuda"
	"github.com/mass-dev/mass/trainer"
)

// TestCheckpointSameAsStored: activation checkpointing per layer (recompute in the
// backward) gives the stored-activation backend's losses and LoRA gradients bit for bit,
// on the hybrid (with LoRA dropout on, so the recompute must redraw the same masks) and on
// a two-stage pipeline of it.
func TestCheckpointSameAsStored(t *testing.T) {
	cfg, m := hybridModel(t)
	ws := parityWindows(rand.New(rand.NewPCG(12, 13)), cfg.VocabSize, 2, 70)
	run := func(ck string, devices []int) ([]float32, []float32) {
		a := hybridAdapter(t, cfg)
		a.Config.Dropout = 0.1
		opt := DefaultOptions()
		opt.Attention, opt.Checkpoint, opt.Devices = AttnFlash, ck, devices
		b, err := OpenAny(cfg, m, a, 0, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		out, err := b.ForwardBackward(context.Background(), trainer.Batch{Windows: ws, Seed: 5}, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		var l []float32
		for _, w := range out {
			l = append(l, float32(w.Loss))
		}
		return l, gradsOf(a)
	}
	lOff, gOff := run("off", nil)
	for _, c := range []struct {
		label   string
		devices []int
	}{{"1 dev", nil}, {"pipeline 0,1", []int{0, 1}}} {
		lOn, gOn := run("on", c.devices)
		report(t, "ckpt "+c.label, "losses vs stored", cuda.RelErr(lOn, lOff), 0)
		report(t, "ckpt "+c.label, "grads vs stored", cuda.RelErr(gOn, gOff), 0)
	}
}

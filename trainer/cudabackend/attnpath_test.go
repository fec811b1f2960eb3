//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/model"
)

func TestClearScratchBytes(t *testing.T) {
	c4 := &model.Config{NumHeads: 32, HeadDim: 128}
	if got, want := ClearScratchBytes(c4, 4096), int64(32*4096*4096*8); got != want {
		t.Fatalf("4B at 4096: %d, want %d", got, want)
	}
	b := &Backend{cfg: c4, opt: Options{Attention: AttnClear}}
	for _, tc := range []struct {
		t     int
		flash bool
	}{{4096, false}, {5792, false}, {5793, true}, {16384, true}} {
		if got := b.flashFor(tc.t); got != tc.flash {
			t.Errorf("4B window of %d tokens: flash %v, want %v", tc.t, got, tc.flash)
		}
	}
	b.cfg = &model.Config{NumHeads: 32, HeadDim: 256}
	if b.flashFor(16384) {
		t.Error("head_dim 256 fell back to flash, which does not support it")
	}
}

// TestClearFallsBackToFlash runs one training window with a clear-path limit below its
// scratch: loss and gradients must be the flash path's, bit for bit.
func TestClearFallsBackToFlash(t *testing.T) {
	cfg, m := parityModel(t, "qwen3")
	ws := parityWindows(rand.New(rand.NewPCG(31, 32)), cfg.VocabSize, 1, 16)
	run := func(attn string, limit int64) ([]trainer.WindowLoss, []float32) {
		a := parityAdapter(t, cfg)
		opt := DefaultOptions()
		opt.Attention, opt.ClearScratchMax = attn, limit
		b, err := Open(cfg, m, a, 0, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		wl, err := b.ForwardBackward(context.Background(), trainer.Batch{Windows: ws, Seed: 1}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return wl, gradsOf(a)
	}
	fl, fg := run(AttnFlash, 0)
	cl, cg := run(AttnClear, 1)
	if fl[0] != cl[0] {
		t.Fatalf("fallback loss %v, flash loss %v", cl[0], fl[0])
	}
	for i := range fg {
		if fg[i] != cg[i] {
			t.Fatalf("gradient %d: fallback %v, flash %v", i, cg[i], fg[i])
		}
	}
}

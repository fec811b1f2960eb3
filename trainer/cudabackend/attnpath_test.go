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
		if got := b.attnFor(tc.t) == AttnFlash; got != tc.flash {
			t.Errorf("4B window of %d tokens: flash %v, want %v", tc.t, got, tc.flash)
		}
	}
	b.cfg = &model.Config{NumHeads: 32, HeadDim: 256}
	if got := b.attnFor(16384); got != AttnClear {
		t.Errorf("head_dim 256 at 16384 runs %s, want clear (flash does not support it)", got)
	}
}

// TestAttnSelection checks which path each choice runs, and that a forced path the shape
// cannot run is refused when the backend opens.
func TestAttnSelection(t *testing.T) {
	c4 := &model.Config{NumHeads: 32, NumKVHeads: 8, HeadDim: 128}
	c96 := &model.Config{NumHeads: 8, NumKVHeads: 8, HeadDim: 96}
	for _, tc := range []struct {
		cfg  *model.Config
		attn string
		t    int
		want string
	}{
		{c4, AttnAuto, 4096, AttnTC}, {c4, "", 32768, AttnTC}, {c4, AttnTC, 40, AttnTC},
		{c4, AttnClear, 4096, AttnClear}, {c4, AttnFlash, 4096, AttnFlash},
		{c96, AttnAuto, 4096, AttnClear}, {c96, AttnAuto, 16384, AttnFlash},
	} {
		b := &Backend{cfg: tc.cfg, opt: Options{Attention: tc.attn}}
		if got := b.attnFor(tc.t); got != tc.want {
			t.Errorf("head_dim %d, %q, T %d: runs %s, want %s", tc.cfg.HeadDim, tc.attn, tc.t, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cfg  *model.Config
		attn string
		ok   bool
	}{{c4, AttnTC, true}, {c96, AttnTC, false}, {c96, AttnFlash, true}, {c4, "fast", false}} {
		if err := checkAttention(tc.cfg, tc.attn); (err == nil) != tc.ok {
			t.Errorf("head_dim %d, %q: error %v, want ok %v", tc.cfg.HeadDim, tc.attn, err, tc.ok)
		}
	}
	t.Setenv("MASS_CUDA_ATTN", AttnFlash)
	if got := DefaultOptions().Attention; got != AttnFlash {
		t.Errorf("MASS_CUDA_ATTN=flash: options say %q", got)
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

package fast

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
)

// TestBF16Storage: a BF16 checkpoint loaded with KeepBF16 (matrices held as bf16, half
// the memory) trains as the same checkpoint widened to float32: the widening is exact,
// so losses, LoRA gradients and logits agree to float32 summation order (the bf16 LM
// head is multiplied a vocabulary block at a time). Dense tied (tiny), dense untied
// (micro) and the hybrid.
func TestBF16Storage(t *testing.T) {
	for _, preset := range []string{"micro", "tiny", "hybrid-micro"} {
		t.Run(preset, func(t *testing.T) {
			cfg, err := model.Preset(preset)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), preset)
			if err := model.NewRandom(cfg, 21).Save(dir, safetensors.BF16, 0); err != nil {
				t.Fatal(err)
			}
			wide, err := model.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			narrow, err := model.LoadWith(dir, model.LoadOptions{KeepBF16: true})
			if err != nil {
				t.Fatal(err)
			}
			var held, full int
			for n, tn := range narrow.Tensors {
				if len(tn.Shape) == 2 && (tn.BF16 == nil || tn.Data != nil) {
					t.Fatalf("%s: matrix not held as bf16", n)
				}
				held += 2*len(tn.BF16) + 4*len(tn.Data)
				full += 4 * len(wide.Tensors[n].Data)
			}
			if held > full*51/100 {
				t.Errorf("bf16 model holds %d bytes, the float32 one %d", held, full)
			}
			ws := windows(rand.New(rand.NewPCG(8, 9)), cfg.VocabSize, 2, 24)
			lw, gw, zw := bf16Step(t, wide, ws)
			ln, gn, zn := bf16Step(t, narrow, ws)
			if math.Abs(lw-ln) > 1e-6*math.Abs(lw) {
				t.Errorf("loss %v (float32 weights) vs %v (bf16 weights)", lw, ln)
			}
			if d := relMax(gw, gn); d > 1e-5 {
				t.Errorf("LoRA gradients differ by %.3g relative", d)
			}
			if d := relMax(zw, zn); d > 1e-6 {
				t.Errorf("logits differ by %.3g relative", d)
			}
		})
	}
}

// bf16Step runs one window pair forward and backward and the logits of the first.
func bf16Step(t *testing.T, m *model.Model, ws []trainer.Window) (float64, []float32, []float32) {
	a := testAdapter(t, m.Config, 0)
	be, err := New(m, a)
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ls, err := be.ForwardBackward(context.Background(), trainer.Batch{Windows: ws, Seed: 1}, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	var g []float32
	for _, p := range a.Params {
		g = append(g, p.Grad...)
	}
	z, err := be.Logits(context.Background(), ws[0])
	if err != nil {
		t.Fatal(err)
	}
	return ls[0].Loss + ls[1].Loss, g, z
}

// relMax is max|a−b| over max|a|.
func relMax(a, b []float32) float64 {
	var d, s float64
	for i := range a {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		s = math.Max(s, math.Abs(float64(a[i])))
	}
	return d / s
}

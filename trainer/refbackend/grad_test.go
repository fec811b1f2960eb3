package refbackend

import (
	"context"
	"math"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

func testSetup(t *testing.T, arch string, dropout float64) (*model.Model, *lora.Adapter, trainer.Backend) {
	t.Helper()
	cfg, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	if arch == "qwen2" {
		cfg.Arch, cfg.ModelType, cfg.AttentionBias = model.Qwen2, "qwen2", true
	}
	cfg.NumLayers = 1
	m := model.NewRandom(cfg, 1)
	lc := lora.Config{Rank: 4, Alpha: 8, Dropout: dropout, Targets: lora.Modules}
	a, err := lora.New(lc, cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Non-zero B so that every gradient is non-trivial.
	for i, p := range a.Params {
		for j := range p.Data {
			if p.Data[j] == 0 {
				p.Data[j] = float32(0.05 * math.Sin(float64(i*131+j)))
			}
		}
	}
	be, err := New(m, a)
	if err != nil {
		t.Fatal(err)
	}
	return m, a, be
}

func testWindow() trainer.Window {
	ids := []int32{5, 17, 200, 3, 99, 42, 7, 7, 128}
	labels := []int32{-100, -100, 200, 3, -100, 42, 7, 7, 128}
	return trainer.Window{InputIDs: ids, Labels: labels}
}

// TestGradientsMatchFiniteDifferences checks the symbolic gradients of every
// custom op end to end against central differences of the loss.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for _, arch := range []string{"qwen3", "qwen2"} {
		t.Run(arch, func(t *testing.T) {
			_, a, be := testSetup(t, arch, 0)
			ctx := context.Background()
			w := testWindow()
			if _, err := be.ForwardBackward(ctx, trainer.Batch{Windows: []trainer.Window{w}}, 1); err != nil {
				t.Fatal(err)
			}
			loss := func() float64 {
				l, err := be.Loss(ctx, []trainer.Window{w})
				if err != nil {
					t.Fatal(err)
				}
				return l[0].Loss
			}
			for _, p := range a.Params {
				for _, j := range []int{0, len(p.Data) / 2, len(p.Data) - 1} {
					old := p.Data[j]
					h := float32(1e-3)
					p.Data[j] = old + h
					up := loss()
					hu := float64(p.Data[j] - old)
					p.Data[j] = old - h
					down := loss()
					hd := float64(old - p.Data[j])
					p.Data[j] = old
					num := (up - down) / (hu + hd)
					got := float64(p.Grad[j])
					if math.Abs(got-num) > 1e-3*math.Abs(num)+1e-6 {
						t.Errorf("%s[%d]: symbolic %.8g, numeric %.8g", p.Name, j, got, num)
					}
				}
			}
		})
	}
}

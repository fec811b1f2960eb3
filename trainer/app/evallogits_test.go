package app

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
	"github.com/mass-dev/mass/trainer/train"
)

// TestEvalLogits: eval --logits writes one [tokens, vocab] tensor per row, and the
// cross-entropy recomputed here from those logits (position t predicts label t+1) is the
// loss eval reports.
func TestEvalLogits(t *testing.T) {
	f := newToy(t)
	path := filepath.Join(f.dir, "logits.safetensors")
	res := evalJSON(t, "--model", f.model, "--data", f.val, "--logits", path)
	cfg, err := model.LoadConfig(f.model)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := train.ReadRows(f.val)
	if err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var sum float64
	for i, r := range rows {
		w := train.Window(r)
		lg, shape, err := st.Float32s(LogitsTensor(i))
		if err != nil {
			t.Fatal(err)
		}
		if shape[0] != len(w.InputIDs) || shape[1] != cfg.VocabSize {
			t.Fatalf("window %d logits shape %v", i, shape)
		}
		var ce float64
		n := 0
		for p := 0; p+1 < len(w.Labels); p++ {
			y := w.Labels[p+1]
			if y == trainer.IgnoreIndex {
				continue
			}
			row := lg[p*cfg.VocabSize : (p+1)*cfg.VocabSize]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = math.Max(mx, float64(v))
			}
			var z float64
			for _, v := range row {
				z += math.Exp(float64(v) - mx)
			}
			ce += mx + math.Log(z) - float64(row[y])
			n++
		}
		sum += ce / float64(n)
	}
	if got := sum / float64(len(rows)); !near(got, res.Loss, 1e-6) {
		t.Errorf("loss from the written logits %.9f, eval reported %.9f", got, res.Loss)
	}
	if _, _, err := runApp("eval", "--model", f.model, "--data", f.val, "--logits", filepath.Join(f.dir, "no", "such", "dir", "x")); err == nil {
		t.Error("eval --logits into a missing folder succeeded")
	}
}

// TestBenchTrainAlpha: bench-train --alpha reaches the adapter (the dump records it);
// without it alpha is twice the rank.
func TestBenchTrainAlpha(t *testing.T) {
	f := newToy(t)
	for _, tc := range []struct {
		args  []string
		alpha float64
	}{{nil, 8}, {[]string{"--alpha", "3"}, 3}} {
		dump := filepath.Join(f.dir, "dump"+strconv.Itoa(int(tc.alpha)))
		mustRun(t, append([]string{"bench-train", "--model", f.model, "--seq", "16", "--steps", "1", "--rank", "4", "--dump", dump}, tc.args...)...)
		b, err := os.ReadFile(filepath.Join(dump, "windows.json"))
		if err != nil {
			t.Fatal(err)
		}
		var d struct{ Alpha float64 }
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if d.Alpha != tc.alpha {
			t.Errorf("bench-train %v: alpha %v, want %v", tc.args, d.Alpha, tc.alpha)
		}
	}
}

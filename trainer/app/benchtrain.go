package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/urfave/cli/v2"
)

// benchTrainResult is bench-train's JSON line (scripts/torch_lora_bench.py
// prints the same fields).
type benchTrainResult struct {
	Impl         string    `json:"impl"`
	Seq          int       `json:"seq"`
	Steps        int       `json:"steps"`
	CPUPerStep   float64   `json:"cpu_s_per_step"`
	WallPerStep  float64   `json:"wall_s_per_step"`
	PeakRSSMiB   float64   `json:"peak_rss_mib"`
	Losses       []float64 `json:"losses"`
	LoadCPUSecs  float64   `json:"load_cpu_s"`
	ComputeDType string    `json:"dtype"`
	WeightsDType string    `json:"weights_dtype"` // how the frozen matrices are held: bf16 or float32
}

func (r *runner) benchTrainCommand() *cli.Command {
	return &cli.Command{
		Name: "bench-train",
		Usage: "time LoRA AdamW steps on a model folder (one window of --seq tokens per step, dropout 0); " +
			"--dump writes the windows and the initial adapter for scripts/torch_lora_bench.py",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model `DIR`"},
			&cli.IntFlag{Name: "seq", Value: 256},
			&cli.IntFlag{Name: "steps", Value: 3, Usage: "timed steps (after one untimed warm-up step)"},
			&cli.IntFlag{Name: "rank", Value: 8},
			&cli.Float64Flag{Name: "alpha", Usage: "LoRA alpha (default 2 × rank, the paper's ratio)"},
			&cli.Float64Flag{Name: "lr", Value: 1e-3},
			&cli.Uint64Flag{Name: "seed", Value: 1},
			&cli.StringFlag{Name: "dump", Usage: "write windows.json and lora_init.safetensors into `DIR` (the torch script's inputs)"},
			r.backendFlag(),
		},
		Action: func(c *cli.Context) error {
			f, err := r.pickBackend(c.String("backend"))
			if err != nil {
				return err
			}
			c0 := cpuSeconds()
			m, err := loadFor(c.String("model"), c.String("backend"))
			if err != nil {
				return err
			}
			steps := c.Int("steps")
			alpha := c.Float64("alpha")
			if alpha == 0 {
				alpha = float64(2 * c.Int("rank"))
			}
			a, err := lora.New(lora.Config{Rank: c.Int("rank"), Alpha: alpha, Targets: lora.Modules}, m.Config, c.Uint64("seed"))
			if err != nil {
				return err
			}
			ws := benchWindows(steps+1, c.Int("seq"), m.Config.VocabSize, c.Uint64("seed"))
			if d := c.String("dump"); d != "" {
				if err := dumpBench(d, a, ws); err != nil {
					return err
				}
			}
			be, err := f(m, a)
			if err != nil {
				return err
			}
			defer be.Close()
			res, err := benchSteps(be, a, ws, c.Float64("lr"))
			if err != nil {
				return err
			}
			res.Impl, res.Seq, res.Steps, res.ComputeDType = "mass-"+be.Name(), c.Int("seq"), steps, "float32"
			res.WeightsDType = "float32"
			if m.Get("model.embed_tokens.weight").BF16 != nil {
				res.WeightsDType = "bf16"
			}
			res.LoadCPUSecs = cpuSeconds() - c0 - res.CPUPerStep*float64(steps)
			return json.NewEncoder(c.App.Writer).Encode(res)
		},
	}
}

// benchWindows are n windows of seq random ids, the first quarter unsupervised.
func benchWindows(n, seq, vocab int, seed uint64) []trainer.Window {
	rng := rand.New(rand.NewPCG(seed, 0x62656e63))
	ws := make([]trainer.Window, n)
	for i := range ws {
		w := trainer.Window{InputIDs: make([]int32, seq), Labels: make([]int32, seq)}
		for j := range w.InputIDs {
			w.InputIDs[j] = int32(rng.IntN(vocab))
			w.Labels[j] = w.InputIDs[j]
			if j < seq/4 {
				w.Labels[j] = trainer.IgnoreIndex
			}
		}
		ws[i] = w
	}
	return ws
}

// benchSteps runs one AdamW step per window (constant lr, no clipping, no
// weight decay, as the torch script), timing all but the first.
func benchSteps(be trainer.Backend, a *lora.Adapter, ws []trainer.Window, lr float64) (benchTrainResult, error) {
	cfg := optim.Config{LR: lr, TotalSteps: len(ws), Floor: 1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	opt := optim.NewAdamW(cfg, a)
	var res benchTrainResult
	var t0 time.Time
	var c0 float64
	for i, w := range ws {
		if i == 1 {
			t0, c0 = time.Now(), cpuSeconds()
		}
		a.ZeroGrad()
		l, err := be.ForwardBackward(context.Background(), trainer.Batch{Windows: []trainer.Window{w}, Seed: uint64(i)}, 1)
		if err != nil {
			return res, err
		}
		if err := opt.Step(a.Params, lr); err != nil {
			return res, err
		}
		res.Losses = append(res.Losses, l[0].Loss)
	}
	n := float64(len(ws) - 1)
	res.CPUPerStep, res.WallPerStep = (cpuSeconds()-c0)/n, time.Since(t0).Seconds()/n
	res.PeakRSSMiB = peakRSSMiB()
	return res, nil
}

func dumpBench(dir string, a *lora.Adapter, ws []trainer.Window) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench dump: %w", err)
	}
	type row struct {
		InputIDs []int32 `json:"input_ids"`
		Labels   []int32 `json:"labels"`
	}
	rows := make([]row, len(ws))
	for i, w := range ws {
		rows[i] = row{w.InputIDs, w.Labels}
	}
	b, err := json.Marshal(map[string]any{"windows": rows, "rank": a.Config.Rank, "alpha": a.Config.Alpha})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "windows.json"), b, 0o644); err != nil {
		return fmt.Errorf("bench dump: %w", err)
	}
	return a.Save(filepath.Join(dir, "lora_init.safetensors"), "", nil)
}

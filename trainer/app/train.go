package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/urfave/cli/v2"
)

func (r *runner) trainCommand() *cli.Command {
	return &cli.Command{
		Name:  "train",
		Usage: "train a LoRA adapter on rows.jsonl windows (resumes from --out's latest checkpoint)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR` (Hugging Face layout)"},
			&cli.StringFlag{Name: "data", Required: true, Usage: "training windows: rows.jsonl `FILE` or dataset folder"},
			&cli.StringFlag{Name: "val", Usage: "validation windows: rows.jsonl `FILE` or dataset folder"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "run `DIR` (checkpoints, metrics.jsonl, best/)"},
			r.backendFlag(),
			&cli.IntFlag{Name: "steps", Value: train.DefaultSteps, Usage: "optimizer steps"},
			&cli.IntFlag{Name: "batch", Value: train.DefaultBatch, Usage: "windows per micro-batch"},
			&cli.IntFlag{Name: "accum", Value: train.DefaultAccum, Usage: "micro-batches per optimizer step: gradients of --batch × --accum windows are summed, each window's loss the mean over its supervised tokens, the step's loss their mean"},
			&cli.Float64Flag{Name: "lr", Value: optim.DefaultLR, Usage: "peak learning rate"},
			&cli.IntFlag{Name: "warmup", Value: optim.DefaultWarmup, Usage: "linear warmup steps"},
			&cli.Float64Flag{Name: "floor", Value: optim.DefaultFloor, Usage: "final lr as a fraction of the peak (cosine)"},
			&cli.Float64Flag{Name: "weight-decay", Value: optim.DefaultWeightDecay},
			&cli.Float64Flag{Name: "clip", Value: optim.DefaultClip, Usage: "max global gradient norm (0: off)"},
			&cli.Float64Flag{Name: "beta1", Value: optim.DefaultBeta1, Usage: "AdamW β1"},
			&cli.Float64Flag{Name: "beta2", Value: optim.DefaultBeta2, Usage: "AdamW β2"},
			&cli.IntFlag{Name: "rank", Value: lora.DefaultRank},
			&cli.Float64Flag{Name: "alpha", Value: lora.DefaultAlpha},
			&cli.Float64Flag{Name: "dropout", Value: lora.DefaultDropout},
			&cli.BoolFlag{Name: "rslora", Usage: "scale by alpha/sqrt(rank)"},
			&cli.StringFlag{Name: "targets", Usage: "comma-separated LoRA target modules (default: " + strings.Join(lora.Modules, ",") + ", and on a Qwen3.5/3.6 hybrid also " + strings.Join(lora.LinearModules, ",") + ")"},
			&cli.IntFlag{Name: "val-every", Value: train.DefaultValEvery, Usage: "validate every `N` steps (and at the last)"},
			&cli.IntFlag{Name: "ckpt-every", Value: train.DefaultCkptEvery, Usage: "checkpoint every `N` steps (and at the last)"},
			&cli.IntFlag{Name: "keep-checkpoints", Value: train.DefaultKeep, Usage: "keep the newest `N` checkpoints (0: all); best/ is kept apart"},
			&cli.IntFlag{Name: "max-val", Usage: "use at most `N` validation windows"},
			&cli.Uint64Flag{Name: "seed", Value: train.DefaultSeed},
			&cli.BoolFlag{Name: "json-progress", Usage: "print each metrics record as a JSON line on stdout"},
		},
		Action: func(c *cli.Context) error {
			targets, err := defaultTargets(c.String("targets"), c.String("model"))
			if err != nil {
				return err
			}
			cfg := train.Config{
				Model: c.String("model"), Data: c.String("data"), Val: c.String("val"), Out: c.String("out"),
				Backend: c.String("backend"), Steps: c.Int("steps"), Batch: c.Int("batch"), Accum: c.Int("accum"),
				ValEvery: c.Int("val-every"), CkptEvery: c.Int("ckpt-every"), MaxVal: c.Int("max-val"), Keep: c.Int("keep-checkpoints"), Seed: c.Uint64("seed"),
				LoRA: lora.Config{Rank: c.Int("rank"), Alpha: c.Float64("alpha"), Dropout: c.Float64("dropout"),
					RSLoRA: c.Bool("rslora"), Targets: targets},
				Optim: optim.Config{LR: c.Float64("lr"), Warmup: c.Int("warmup"), TotalSteps: c.Int("steps"), Floor: c.Float64("floor"),
					WeightDecay: c.Float64("weight-decay"), Beta1: c.Float64("beta1"), Beta2: c.Float64("beta2"), Eps: optim.DefaultEps, Clip: c.Float64("clip")},
			}
			ctx, stop := signalContext()
			defer stop()
			jsonOut := c.Bool("json-progress")
			errw := c.App.ErrWriter
			tty := false
			if f, ok := errw.(*os.File); ok {
				st, _ := f.Stat()
				tty = st != nil && st.Mode()&os.ModeCharDevice != 0
			}
			enc := json.NewEncoder(c.App.Writer)
			res, err := train.Run(ctx, cfg, train.Options{
				Backends: r.opt.Backends,
				Logger:   slog.Default(),
				OnRecord: func(r train.Record) {
					if jsonOut {
						enc.Encode(r)
						return // the reader of stdout shows progress
					}
					if r.ValLoss != nil {
						fmt.Fprintf(errw, "\nstep %d/%d  val_loss %.4f\n", r.Step, r.Steps, *r.ValLoss)
						return
					}
					if tty {
						fmt.Fprintf(errw, "\r%s   ", train.ProgressLine(r))
					} else if r.Step%10 == 0 || r.Step == r.Steps || r.Step == 1 {
						fmt.Fprintln(errw, train.ProgressLine(r))
					}
				},
			})
			fmt.Fprintln(errw)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(res)
			fmt.Fprintf(errw, "done: %s\n", b)
			return nil
		},
	}
}

// defaultTargets is the --targets list, or when empty the model's default:
// the dense projections, plus the Gated DeltaNet ones on a hybrid.
func defaultTargets(flag, modelDir string) ([]string, error) {
	if flag != "" {
		return strings.Split(flag, ","), nil
	}
	mc, err := model.LoadConfig(modelDir)
	if err != nil {
		return nil, err
	}
	if mc.Hybrid != nil {
		return lora.HybridTargets(), nil
	}
	return lora.Modules, nil
}

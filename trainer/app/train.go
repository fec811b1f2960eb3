package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"strings"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/mass-dev/mass/trainer/trainflags"
	"github.com/urfave/cli/v2"
)

func (r *runner) trainCommand() *cli.Command {
	return &cli.Command{
		Name:  "train",
		Usage: "train a LoRA adapter on rows.jsonl windows (resumes from --out's latest checkpoint)",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR` (Hugging Face layout)"},
			&cli.StringFlag{Name: "data", Required: true, Usage: "training windows: rows.jsonl `FILE` or dataset folder"},
			&cli.StringFlag{Name: "val", Usage: "validation windows: rows.jsonl `FILE` or dataset folder"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "run `DIR` (checkpoints, metrics.jsonl, best/)"},
			r.backendFlag(),
			&cli.BoolFlag{Name: "json-progress", Usage: "print each metrics record as a JSON line on stdout"},
		}, trainflags.CLI(trainflags.All)...), // the knobs, declared once (massctl train and massd use them too)
		Action: func(c *cli.Context) error {
			targets, err := defaultTargets(c.String("targets"), c.String("model"))
			if err != nil {
				return err
			}
			backends, err := r.placed(c)
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
				Backends: backends,
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

// placed returns the backends with --devices/--replicas applied to the one that places
// itself on several devices (the CUDA build's); without those flags, the backends as built.
func (r *runner) placed(c *cli.Context) (map[string]trainer.Factory, error) {
	var p struct {
		Devices  []int `flag:"devices"`
		Replicas int   `flag:"replicas"`
	}
	if err := trainflags.Fill(c, &p); err != nil {
		return nil, err
	}
	if len(p.Devices) == 0 && p.Replicas <= 1 {
		return r.opt.Backends, nil
	}
	if r.opt.Place == nil {
		return nil, errclass.Mark(fmt.Errorf("--devices and --replicas need the CUDA build of mass-train (this one has %s)", strings.Join(r.names(), ", ")), errclass.ErrInvalid)
	}
	name, f, err := r.opt.Place(p.Devices, p.Replicas)
	if err != nil {
		return nil, err
	}
	out := maps.Clone(r.opt.Backends)
	out[name] = f
	return out, nil
}

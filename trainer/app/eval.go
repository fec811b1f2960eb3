package app

import (
	"encoding/json"
	"fmt"

	"github.com/mass-dev/mass/trainer/export"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/urfave/cli/v2"
)

// bf16Backend is the backend that reads bf16 matrices (model.LoadOptions.KeepBF16).
const bf16Backend = "cpu"

// loadFor loads a model folder for a backend: matrices stored BF16 stay bf16 for the
// cpu backend (half the memory, no rounding), everything else is widened to float32.
func loadFor(dir, backend string) (*model.Model, error) {
	return model.LoadWith(dir, model.LoadOptions{KeepBF16: backend == bf16Backend})
}

// loadAdapter reads a PEFT adapter folder, or returns an adapter with no
// targets-effect (B = 0) when dir is empty.
func loadAdapter(dir string, mc *model.Config) (*lora.Adapter, error) {
	if dir == "" {
		return lora.New(lora.Config{Rank: 1, Alpha: 1, Targets: []string{"q_proj"}}, mc, 0)
	}
	return export.ReadAdapter(dir, mc)
}

func (r *runner) evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "mean over windows of each window's mean supervised-token loss",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR`"},
			&cli.StringFlag{Name: "adapter", Usage: "PEFT adapter `DIR`"},
			&cli.StringFlag{Name: "data", Required: true, Usage: "rows.jsonl `FILE`"},
			&cli.BoolFlag{Name: "json", Usage: `print {"loss","supervised_tokens","windows"}`},
			&cli.StringFlag{Name: "logits", Usage: "also write every window's float32 logits to `FILE` (safetensors, tensors logits.N [tokens, vocab])"},
			r.backendFlag(),
		},
		Action: func(c *cli.Context) error {
			m, err := loadFor(c.String("model"), c.String("backend"))
			if err != nil {
				return err
			}
			a, err := loadAdapter(c.String("adapter"), m.Config)
			if err != nil {
				return err
			}
			rows, err := train.ReadRows(c.String("data"))
			if err != nil {
				return err
			}
			f, err := r.pickBackend(c.String("backend"))
			if err != nil {
				return err
			}
			if name := c.String("backend"); !a.Config.Uniform() && name != "cpu" && name != "reference" {
				return fmt.Errorf("the adapter has rank_pattern/alpha_pattern, which backend %s does not apply; use --backend cpu", name)
			}
			be, err := f(m, a)
			if err != nil {
				return err
			}
			defer be.Close()
			ctx, stop := signalContext()
			defer stop()
			res, err := train.Evaluate(ctx, be, rows)
			if err != nil {
				return err
			}
			if p := c.String("logits"); p != "" {
				if err := writeLogits(ctx, p, be, rows, m.Config.VocabSize); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				return json.NewEncoder(c.App.Writer).Encode(res)
			}
			fmt.Fprintf(c.App.Writer, "loss %.6f over %d windows (%d supervised tokens, %d skipped)\n", res.Loss, res.Windows, res.SupervisedTokens, res.Skipped)
			return nil
		},
	}
}

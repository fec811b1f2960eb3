package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/trainer/export"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/urfave/cli/v2"
)

// readRunConfig reads the run.json a training run recorded in its folder.
func readRunConfig(run string) (train.Config, error) {
	var cfg train.Config
	b, err := os.ReadFile(filepath.Join(run, "run.json"))
	if err != nil {
		return cfg, fmt.Errorf("read run config: %w", err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return cfg, fmt.Errorf("parse run.json: %w", err)
	}
	return cfg, nil
}

// runAdapter loads the adapter of a run: its best checkpoint, the latest,
// or a named step.
func runAdapter(run, which string, mc *model.Config) (*lora.Adapter, string, error) {
	cfg, err := readRunConfig(run)
	if err != nil {
		return nil, "", err
	}
	a, err := lora.New(cfg.LoRA, mc, 0)
	if err != nil {
		return nil, "", err
	}
	var path string
	switch {
	case which == "best":
		path = filepath.Join(train.BestDir(run), "adapter.safetensors")
		if _, err := os.Stat(path); err != nil {
			return nil, "", fmt.Errorf("run %s has no best checkpoint (no validation ran); use --checkpoint latest", run)
		}
	case which == "latest":
		name, err := os.ReadFile(filepath.Join(run, "checkpoints", "latest"))
		if err != nil {
			return nil, "", fmt.Errorf("run %s has no checkpoint: %w", run, err)
		}
		path = filepath.Join(run, "checkpoints", filepath.Base(strings.TrimSpace(string(name))), "adapter.safetensors")
	default:
		var step int
		if _, err := fmt.Sscan(which, &step); err != nil {
			return nil, "", fmt.Errorf("--checkpoint %q: want best, latest or a step number", which)
		}
		path = filepath.Join(train.CheckpointDir(run, step), "adapter.safetensors")
	}
	if err := a.Load(path); err != nil {
		return nil, "", err
	}
	return a, cfg.Model, nil
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write a run's adapter as a PEFT folder (adapter_config.json + adapter_model.safetensors)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Required: true, Usage: "training run `DIR`"},
			&cli.StringFlag{Name: "checkpoint", Value: "best", Usage: "best, latest or a step number"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "adapter `DIR`"},
			&cli.StringFlag{Name: "base-model", Usage: "base_model_name_or_path to record (default: the run's --model)"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := readRunConfig(c.String("run"))
			if err != nil {
				return err
			}
			mc, err := model.LoadConfig(cfg.Model)
			if err != nil {
				return err
			}
			a, base, err := runAdapter(c.String("run"), c.String("checkpoint"), mc)
			if err != nil {
				return err
			}
			if s := c.String("base-model"); s != "" {
				base = s
			} else if abs, err := filepath.Abs(base); err == nil {
				base = abs // a loader resolves an absolute folder from anywhere
			}
			if err := export.WriteAdapter(c.String("out"), a, base); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "wrote PEFT adapter (%d parameters) to %s\n", a.NumParams(), c.String("out"))
			return nil
		},
	}
}

func mergeCommand() *cli.Command {
	return &cli.Command{
		Name:  "merge",
		Usage: "fold a PEFT adapter into the base model and write a model folder (optionally FP8)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR`"},
			&cli.StringFlag{Name: "adapter", Required: true, Usage: "PEFT adapter `DIR`"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "merged model `DIR`"},
			&cli.StringFlag{Name: "dtype", Value: "BF16", Usage: "BF16, F16 or F32"},
			&cli.BoolFlag{Name: "fp8", Usage: "block-wise FP8 e4m3 (128x128, inverse scales) for the projections"},
			&cli.Int64Flag{Name: "shard-bytes", Value: 5 << 30, Usage: "maximum shard size"},
		},
		Action: func(c *cli.Context) error {
			m, err := model.Load(c.String("model"))
			if err != nil {
				return err
			}
			a, err := export.ReadAdapter(c.String("adapter"), m.Config)
			if err != nil {
				return err
			}
			dt := safetensors.DType(strings.ToUpper(c.String("dtype")))
			if dt != safetensors.BF16 && dt != safetensors.F16 && dt != safetensors.F32 {
				return fmt.Errorf("--dtype %s: want BF16, F16 or F32", dt)
			}
			return export.WriteMerged(c.String("out"), m, a, export.MergedOptions{DType: dt, FP8: c.Bool("fp8"),
				MaxShardBytes: c.Int64("shard-bytes"), TokenizerFrom: c.String("model")})
		},
	}
}

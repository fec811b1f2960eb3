package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/safetensors"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/urfave/cli/v2"
)

func initModelCommand() *cli.Command {
	return &cli.Command{
		Name:  "init-model",
		Usage: "write a random Qwen3-architecture model folder (tiny: Qwen3 vocabulary + tokenizer; micro: 256 tokens)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Value: "tiny", Usage: "preset: tiny or micro"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "model `DIR`"},
			&cli.Uint64Flag{Name: "seed", Value: 1},
			&cli.StringFlag{Name: "dtype", Value: "F32", Usage: "BF16, F16 or F32"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := model.Preset(c.String("config"))
			if err != nil {
				return err
			}
			dt := safetensors.DType(strings.ToUpper(c.String("dtype")))
			if dt != safetensors.BF16 && dt != safetensors.F16 && dt != safetensors.F32 {
				return fmt.Errorf("--dtype %s: want BF16, F16 or F32", c.String("dtype"))
			}
			m := model.NewRandom(cfg, c.Uint64("seed"))
			if err := m.Save(c.String("out"), dt, 0); err != nil {
				return err
			}
			if cfg.VocabSize >= 151643 {
				if err := model.WriteTokenizer(c.String("out")); err != nil {
					return err
				}
			}
			fmt.Fprintf(c.App.ErrWriter, "wrote %s model to %s\n", c.String("config"), c.String("out"))
			return nil
		},
	}
}

func toyDataCommand() *cli.Command {
	return &cli.Command{
		Name:  "toy-data",
		Usage: "write a synthetic rows.jsonl (arithmetic progressions) for tiny-model runs",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Required: true, Usage: "rows.jsonl `FILE`"},
			&cli.IntFlag{Name: "n", Value: 256, Usage: "windows"},
			&cli.IntFlag{Name: "seq", Value: 24, Usage: "tokens per window"},
			&cli.IntFlag{Name: "symbols", Value: 16, Usage: "distinct token ids used (from id 4)"},
			&cli.Uint64Flag{Name: "seed", Value: 1},
		},
		Action: func(c *cli.Context) error {
			f, err := os.Create(c.String("out"))
			if err != nil {
				return err
			}
			if err := train.WriteToyRows(f, c.Int("n"), c.Int("seq"), c.Int("symbols"), c.Uint64("seed")); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		},
	}
}

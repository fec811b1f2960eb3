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
		Usage: "write a random model folder (tiny: Qwen3 vocabulary + tokenizer; micro: 256 tokens; hybrid-tiny, hybrid-micro: the Qwen3.5/3.6 Gated DeltaNet hybrid in the official nested layout)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Value: "tiny", Usage: "preset: tiny, micro, hybrid-tiny or hybrid-micro"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "model `DIR`"},
			&cli.Uint64Flag{Name: "seed", Value: 1},
			&cli.StringFlag{Name: "dtype", Value: "F32", Usage: "BF16, F16 or F32"},
			&cli.StringFlag{Name: "arch", Usage: "qwen3 (the presets') or qwen2 (q/k/v bias, no q/k norm)"},
			&cli.IntFlag{Name: "hidden", Usage: "override hidden_size"},
			&cli.IntFlag{Name: "intermediate", Usage: "override intermediate_size"},
			&cli.IntFlag{Name: "layers", Usage: "override num_hidden_layers"},
			&cli.IntFlag{Name: "heads", Usage: "override num_attention_heads"},
			&cli.IntFlag{Name: "kv-heads", Usage: "override num_key_value_heads"},
			&cli.IntFlag{Name: "head-dim", Usage: "override head_dim"},
			&cli.IntFlag{Name: "vocab", Usage: "override vocab_size"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := model.Preset(c.String("config"))
			if err != nil {
				return err
			}
			if err := overrideShape(cfg, c); err != nil {
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

// overrideShape applies init-model's shape flags to a preset.
func overrideShape(cfg *model.Config, c *cli.Context) error {
	for _, o := range []struct {
		flag string
		dst  *int
	}{{"hidden", &cfg.HiddenSize}, {"intermediate", &cfg.IntermediateSize}, {"layers", &cfg.NumLayers},
		{"heads", &cfg.NumHeads}, {"kv-heads", &cfg.NumKVHeads}, {"head-dim", &cfg.HeadDim}, {"vocab", &cfg.VocabSize}} {
		if v := c.Int(o.flag); v > 0 {
			*o.dst = v
		} else if c.IsSet(o.flag) {
			return fmt.Errorf("--%s %d must be positive", o.flag, v)
		}
	}
	if cfg.Hybrid != nil {
		if c.String("arch") != "" {
			return fmt.Errorf("--arch does not apply to the hybrid presets")
		}
		if len(cfg.Hybrid.LayerTypes) != cfg.NumLayers {
			cfg.Hybrid = model.HybridLayers(cfg.Hybrid, cfg.NumLayers)
		}
	}
	switch c.String("arch") {
	case "", "qwen3":
	case "qwen2":
		cfg.Arch, cfg.ModelType, cfg.AttentionBias = model.Qwen2, "qwen2", true
		cfg.Architectures = []string{"Qwen2ForCausalLM"}
	default:
		return fmt.Errorf("--arch %q: want qwen3 or qwen2", c.String("arch"))
	}
	switch {
	case cfg.NumHeads%cfg.NumKVHeads != 0:
		return fmt.Errorf("heads %d must be a multiple of kv-heads %d", cfg.NumHeads, cfg.NumKVHeads)
	case cfg.HeadDim%2 != 0:
		return fmt.Errorf("head-dim %d must be even", cfg.HeadDim)
	}
	return nil
}

package app

import (
	"fmt"

	"github.com/mass-dev/mass/trainer/model"
	"github.com/urfave/cli/v2"
)

// inspectModelCommand reads a model folder's config.json only: family,
// parameter count and the memory plan on this machine; it fails (exit 1)
// when the float32 weights would not fit.
func inspectModelCommand() *cli.Command {
	return &cli.Command{
		Name:  "inspect-model",
		Usage: "report a model folder's family, parameter count and memory plan (config.json only; no weights read)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "model", Required: true, Usage: "model `DIR`"}},
		Action: func(c *cli.Context) error {
			cfg, err := model.LoadConfig(c.String("model"))
			if err != nil {
				return err
			}
			p := cfg.MemoryPlan()
			fmt.Fprintf(c.App.Writer, "%s (%s): %s\n", c.String("model"), cfg.Arch, p)
			if err := p.Fits(); err != nil {
				return fmt.Errorf("%s: %w", c.String("model"), err)
			}
			return nil
		},
	}
}

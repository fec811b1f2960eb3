package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/trainer/cudabackend"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/urfave/cli/v2"
)

// inspectModelCommand reads a model folder's config.json only: family,
// parameter count and the memory plan on this machine; it fails (exit 1)
// when the float32 weights would not fit. With --device-gb it prints the GPU
// memory plan for each device size instead and fails only when none fits.
func inspectModelCommand() *cli.Command {
	return &cli.Command{
		Name:  "inspect-model",
		Usage: "report a model folder's family, parameter count and memory plan (config.json only; no weights read)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "model `DIR`"},
			&cli.StringFlag{Name: "device-gb", Usage: "GPU sizes in GB (10⁹ bytes), comma-separated (e.g. 80,141): print the device memory plan for each"},
			&cli.IntFlag{Name: "window", Value: 49152, Usage: "tokens per window for the device plan"},
			&cli.IntFlag{Name: "rank", Value: lora.DefaultRank, Usage: "LoRA rank for the device plan"},
			&cli.StringFlag{Name: "targets", Usage: "LoRA target modules for the device plan (default: train's default for the family)"},
			&cli.IntFlag{Name: "replicas", Value: 1, Usage: "data-parallel replicas (devices needed = stages × replicas)"},
			&cli.IntFlag{Name: "max-devices", Value: 8, Usage: "most pipeline stages per replica to try"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := model.LoadConfig(c.String("model"))
			if err != nil {
				return err
			}
			p := cfg.MemoryPlan()
			fmt.Fprintf(c.App.Writer, "%s (%s): %s\n", c.String("model"), cfg.Arch, p)
			if c.String("device-gb") != "" {
				return devicePlans(c, cfg)
			}
			if err := p.Fits(); err != nil {
				return fmt.Errorf("%s: %w", c.String("model"), err)
			}
			return nil
		},
	}
}

// devicePlans prints cudabackend.PlanMemory for every --device-gb size.
func devicePlans(c *cli.Context, cfg *model.Config) error {
	targets := lora.DefaultConfig().Targets
	if cfg.Hybrid != nil {
		targets = lora.HybridTargets()
	}
	if s := c.String("targets"); s != "" {
		targets = strings.Split(s, ",")
	}
	if err := (lora.Config{Rank: c.Int("rank"), Targets: targets}).Validate(); err != nil {
		return err
	}
	reps := c.Int("replicas")
	if reps < 1 {
		return fmt.Errorf("--replicas %d must be at least 1", reps)
	}
	spec := cudabackend.PlanSpec{Window: c.Int("window"), Rank: c.Int("rank"), Targets: targets}
	var errs []error
	fitted := 0
	for _, f := range strings.Split(c.String("device-gb"), ",") {
		gb, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || gb <= 0 {
			return fmt.Errorf("--device-gb %q: want positive sizes in GB, e.g. 80,141", c.String("device-gb"))
		}
		mp, err := cudabackend.PlanMemory(cfg, spec, int64(gb*1e9), c.Int("max-devices"))
		if err != nil {
			fmt.Fprintf(c.App.Writer, "%g GB device: %v\n", gb, err)
			errs = append(errs, fmt.Errorf("%g GB: %w", gb, err))
			continue
		}
		fitted++
		n := len(mp.Stages)
		fmt.Fprintf(c.App.Writer, "%g GB device: needs %d device(s) per replica (--devices %s), %d for --replicas %d\n%s\n",
			gb, n, cudabackend.DeviceList(n), n*reps, reps, mp)
	}
	if fitted == 0 {
		return errors.Join(errs...)
	}
	return nil
}

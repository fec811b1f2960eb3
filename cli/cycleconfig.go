package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/cyclefile"
	"github.com/mass-dev/mass/cycle/generation"
)

// submitConfig runs `cycle run --config` (cycle) or `generation start
// --config`: the file resolved, the flags given laid over it, the task
// lists checked against massd's specs, then the plan printed (--dry-run)
// or the job submitted.
func submitConfig(c *cli.Context, cycle bool) error {
	path := c.String("config")
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cycle config: %w", err)
	}
	file, err := cyclefile.Parse(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res, err := file.Resolve()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	overlayFlags(c, &res.Cycle)
	dry := cycle && c.Bool("dry-run")
	specs, err := taskSpecs(c)
	switch {
	case err != nil && !dry:
		return err
	case err != nil:
		fmt.Fprintf(c.App.ErrWriter, "massd not asked (%v): tasks not checked against their specs\n", err)
	}
	if err := file.CheckSpecs(specs); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if dry {
		fmt.Fprintf(c.App.Writer, "plan of %s (nothing submitted)\n", path)
		file.WritePlan(c.App.Writer, res, specs)
		return nil
	}
	params, err := res.Params(cycle)
	if err != nil {
		return err
	}
	kind := generation.KindName
	if cycle {
		kind = generation.CycleKindName
	}
	return submitAndWait(c, kind, params)
}

// overlayFlags sets the flags given on the command line over the file's
// values (the base sections; a generations.<g> override keeps its own).
func overlayFlags(c *cli.Context, p *generation.CycleParams) {
	if c.IsSet("tasks") {
		p.Tasks = splitList(c.String("tasks"))
	}
	for flag, dst := range map[string]*int{"episodes": &p.Episodes, "opponents": &p.Opponents, "min-success": &p.MinSuccess,
		"cap": &p.Cap, "train": &p.Train, "val": &p.Val, "train-steps": &p.TrainSteps} {
		if c.IsSet(flag) {
			*dst = c.Int(flag)
		}
	}
	if c.IsSet("model") {
		p.Model = c.String("model")
	}
	if c.IsSet("seed") {
		p.Seed = c.Int64("seed")
	}
	if c.IsSet("lenient") {
		p.Lenient = c.Bool("lenient")
	}
	if c.IsSet("generations") {
		p.Generations = c.Int("generations")
	}
	if c.IsSet("search-iterations") {
		p.SearchIterations = c.Int("search-iterations")
	}
}

// taskSpecs asks massd for its tasks' splits.
func taskSpecs(c *cli.Context) (cyclefile.Specs, error) {
	ts, err := clientFrom(c).Tasks(c.Context)
	if err != nil {
		return nil, fmt.Errorf("list massd's tasks: %w", err)
	}
	specs := cyclefile.Specs{}
	for _, t := range ts {
		specs[t.ID] = strings.TrimSpace(t.Spec.Split)
	}
	return specs, nil
}

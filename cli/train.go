package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// trainCommand submits a "train" job: massd runs mass-train as a subprocess
// and streams its progress into the job (watch it with `massctl job watch`).
func trainCommand() *cli.Command {
	return &cli.Command{
		Name:  "train",
		Usage: "submit LoRA training on SFT windows as a massd job (runs mass-train)",
		Description: "Paths that exist here are sent as absolute paths; others are taken relative to massd's data\n" +
			"directory (e.g. datasets/NAME/rows.jsonl). Unset options use mass-train's defaults (the paper's).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR`"},
			&cli.StringFlag{Name: "data", Required: true, Usage: "training rows.jsonl `FILE`"},
			&cli.StringFlag{Name: "val", Usage: "validation rows.jsonl `FILE`"},
			&cli.StringFlag{Name: "name", Usage: "run name: <data-dir>/runs/`NAME` (default: the job id)"},
			&cli.StringFlag{Name: "backend", Usage: "mass-train backend (cpu, cuda)"},
			&cli.IntFlag{Name: "steps"}, &cli.IntFlag{Name: "batch"}, &cli.IntFlag{Name: "accum"},
			&cli.Float64Flag{Name: "lr"}, &cli.IntFlag{Name: "warmup"}, &cli.Float64Flag{Name: "floor"},
			&cli.IntFlag{Name: "rank"}, &cli.Float64Flag{Name: "alpha"}, &cli.Float64Flag{Name: "dropout"},
			&cli.StringFlag{Name: "targets", Usage: "comma-separated LoRA modules"},
			&cli.IntFlag{Name: "val-every"}, &cli.IntFlag{Name: "ckpt-every"}, &cli.Uint64Flag{Name: "seed"},
			jsonFlag(),
		},
		Action: trainSubmit,
	}
}

// localOrRemote makes a path absolute when it exists on this machine.
func localOrRemote(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if _, err := os.Stat(p); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return p
}

func trainSubmit(c *cli.Context) error {
	p := trainjob.Params{
		Name: c.String("name"), Model: localOrRemote(c.String("model")), Data: localOrRemote(c.String("data")),
		Val: localOrRemote(c.String("val")), Backend: c.String("backend"), Steps: c.Int("steps"), Batch: c.Int("batch"),
		Accum: c.Int("accum"), LR: c.Float64("lr"), Rank: c.Int("rank"), Alpha: c.Float64("alpha"),
		ValEvery: c.Int("val-every"), CkptEvery: c.Int("ckpt-every"), Seed: c.Uint64("seed"),
	}
	if c.IsSet("warmup") {
		v := c.Int("warmup")
		p.Warmup = &v
	}
	if c.IsSet("floor") {
		v := c.Float64("floor")
		p.Floor = &v
	}
	if c.IsSet("dropout") {
		v := c.Float64("dropout")
		p.Dropout = &v
	}
	if t := c.String("targets"); t != "" {
		p.Targets = strings.Split(t, ",")
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := trainjob.ParseParams(raw); err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.SubmitJob(c.Context, api.JobRequest{Kind: trainjob.KindName, Params: raw})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, j)
	}
	fmt.Fprintf(c.App.Writer, "%s\nfollow it with: massctl job watch %s\n", j.ID, j.ID)
	return nil
}

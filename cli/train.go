package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// trainCommand submits a "train" job: massd runs mass-train as a subprocess
// and streams its progress into the job (watch it with `massctl job watch`).
func trainCommand() *cli.Command {
	return &cli.Command{
		Name:  "train",
		Usage: "submit LoRA training on SFT windows as a massd job (runs mass-train)",
		Description: "Paths that exist here are sent as absolute paths; others are taken relative to massd's data\n" +
			"directory (e.g. datasets/NAME/rows.jsonl). Unset options are not sent: mass-train uses its defaults\n" +
			"(the paper's), shown below.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR`"},
			&cli.StringFlag{Name: "data", Required: true, Usage: "training rows.jsonl `FILE`"},
			&cli.StringFlag{Name: "val", Usage: "validation rows.jsonl `FILE`"},
			&cli.StringFlag{Name: "name", Usage: "run name: <data-dir>/runs/`NAME` (default: the job id)"},
			&cli.StringFlag{Name: "backend", Usage: "mass-train backend (default: massd's $MASS_TRAIN_BACKEND, else mass-train's built-in)"},
			&cli.IntFlag{Name: "steps", Value: train.DefaultSteps, Usage: "optimizer steps"},
			&cli.IntFlag{Name: "batch", Value: train.DefaultBatch, Usage: "windows per micro-batch"},
			&cli.IntFlag{Name: "accum", Value: train.DefaultAccum, Usage: "micro-batches per optimizer step"},
			&cli.Float64Flag{Name: "lr", Value: optim.DefaultLR, Usage: "peak learning rate"},
			&cli.IntFlag{Name: "warmup", Value: optim.DefaultWarmup, Usage: "linear warmup steps"},
			&cli.Float64Flag{Name: "floor", Value: optim.DefaultFloor, Usage: "final lr as a fraction of the peak (cosine)"},
			&cli.IntFlag{Name: "rank", Value: lora.DefaultRank, Usage: "LoRA rank"},
			&cli.Float64Flag{Name: "alpha", Value: lora.DefaultAlpha, Usage: "LoRA alpha"},
			&cli.Float64Flag{Name: "dropout", Value: lora.DefaultDropout, Usage: "LoRA dropout"},
			&cli.StringFlag{Name: "targets", Value: strings.Join(lora.Modules, ","), Usage: "comma-separated LoRA modules"},
			&cli.IntFlag{Name: "val-every", Value: train.DefaultValEvery, Usage: "validate every `N` steps (and at the last)"},
			&cli.IntFlag{Name: "ckpt-every", Value: train.DefaultCkptEvery, Usage: "checkpoint every `N` steps (and at the last)"},
			&cli.Uint64Flag{Name: "seed", Value: train.DefaultSeed, Usage: "seed of LoRA init, dropout and window order"},
			jsonFlag(),
		},
		Action: trainSubmit,
	}
}

func optInt(c *cli.Context, name string) *int {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Int(name)
	return &v
}

func optFloat(c *cli.Context, name string) *float64 {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Float64(name)
	return &v
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
	// Only options given are sent: the others stay mass-train's defaults,
	// which the help shows.
	p := trainjob.Params{
		Name: c.String("name"), Model: localOrRemote(c.String("model")), Data: localOrRemote(c.String("data")),
		Val: localOrRemote(c.String("val")), Backend: c.String("backend"),
	}
	setInt := func(name string, dst *int) {
		if c.IsSet(name) {
			*dst = c.Int(name)
		}
	}
	setFloat := func(name string, dst *float64) {
		if c.IsSet(name) {
			*dst = c.Float64(name)
		}
	}
	setInt("steps", &p.Steps)
	setInt("batch", &p.Batch)
	setInt("accum", &p.Accum)
	setInt("rank", &p.Rank)
	setInt("val-every", &p.ValEvery)
	setInt("ckpt-every", &p.CkptEvery)
	setFloat("lr", &p.LR)
	setFloat("alpha", &p.Alpha)
	if c.IsSet("seed") {
		p.Seed = c.Uint64("seed")
	}
	p.Warmup = optInt(c, "warmup")
	p.Floor = optFloat(c, "floor")
	p.Dropout = optFloat(c, "dropout")
	if c.IsSet("targets") {
		p.Targets = strings.Split(c.String("targets"), ",")
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

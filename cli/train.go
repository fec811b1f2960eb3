package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/trainer/trainflags"
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
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "model", Required: true, Usage: "base model `DIR`"},
			&cli.StringFlag{Name: "data", Required: true, Usage: "training rows.jsonl `FILE`"},
			&cli.StringFlag{Name: "val", Usage: "validation rows.jsonl `FILE`"},
			&cli.StringFlag{Name: "name", Usage: "run name: <data-dir>/runs/`NAME` (default: the job id)"},
			&cli.StringFlag{Name: "backend", Usage: "mass-train backend (default: massd's $MASS_TRAIN_BACKEND, else mass-train's built-in)"},
			jsonFlag(),
		}, trainflags.CLI(trainflags.Job())...), // mass-train's own knobs, declared once in trainflags
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
	// Only options given are sent: the others stay mass-train's defaults,
	// which the help shows.
	p := trainjob.Params{
		Name: c.String("name"), Model: localOrRemote(c.String("model")), Data: localOrRemote(c.String("data")),
		Val: localOrRemote(c.String("val")), Backend: c.String("backend"),
	}
	if err := trainflags.Fill(c, &p); err != nil {
		return err
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

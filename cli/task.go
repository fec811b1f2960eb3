package cli

import (
	"errors"
	"fmt"
	"github.com/mass-dev/mass/errclass"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

func taskCommand() *cli.Command {
	return &cli.Command{
		Name:  "task",
		Usage: "add, list, show, update, remove and validate task specs",
		Subcommands: []*cli.Command{
			{
				Name:      "add",
				Usage:     "validate a spec and upload it with its inputs to massd",
				ArgsUsage: "SPEC...",
				Flags:     []cli.Flag{jsonFlag()},
				Action:    taskAdd,
			},
			{
				Name:   "list",
				Usage:  "list stored tasks",
				Flags:  []cli.Flag{jsonFlag()},
				Action: taskList,
			},
			{
				Name:      "show",
				Usage:     "show one stored task",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{jsonFlag()},
				Action:    taskShow,
			},
			{
				Name:      "update",
				Usage:     "replace a stored task with a new version of its spec and files (same id)",
				ArgsUsage: "SPEC",
				Description: "Validates and uploads like add, then swaps the stored folder atomically. Refused while jobs of\n" +
					"the task are queued or running; finished jobs keep their records.",
				Flags:  []cli.Flag{jsonFlag()},
				Action: taskUpdate,
			},
			{
				Name:      "rm",
				Usage:     "remove a stored task (refused when jobs reference it, unless --force)",
				ArgsUsage: "ID",
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "remove it even when finished jobs reference it"}, jsonFlag()},
				Action:    taskRm,
			},
			{
				Name:      "validate",
				Usage:     "check spec files locally (no daemon needed); errors name the line and field",
				ArgsUsage: "SPEC...",
				Flags:     []cli.Flag{jsonFlag()},
				Action:    taskValidate,
			},
			taskGradeCommand(),
			taskImportCommand(),
		},
	}
}

func taskAdd(c *cli.Context) error {
	specs, err := positional(c)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return errors.New("task add needs at least one SPEC file, e.g. examples/tasks/sales-analysis/task.yaml")
	}
	cl := clientFrom(c)
	var added []api.Task
	for _, p := range specs {
		t, err := cl.AddTask(c.Context, p)
		if err != nil {
			return fmt.Errorf("add %s: %w", p, err)
		}
		added = append(added, t)
		if !c.Bool("json") {
			fmt.Fprintf(c.App.Writer, "added task %s (%s)\n", t.ID, t.Dir)
		}
	}
	if c.Bool("json") {
		return printJSON(c, added)
	}
	return nil
}

func taskList(c *cli.Context) error {
	cl := clientFrom(c)
	ts, err := cl.Tasks(c.Context)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, ts)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tSPLIT\tINPUTS\tPROTECTED\tADDED")
	for _, t := range ts {
		split := t.Spec.Split
		if split == "" {
			split = taskspec.SplitTrain
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", t.ID, split, len(t.Spec.Inputs), len(t.Spec.ProtectedPaths), fmtTime(t.Created))
	}
	return tw.Flush()
}

func taskShow(c *cli.Context) error {
	id, err := oneArg(c, "task ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	t, err := cl.Task(c.Context, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, t)
	}
	printTask(c.App.Writer, t)
	return nil
}

type validation struct {
	File   string   `json:"file"`
	ID     string   `json:"id,omitempty"`
	OK     bool     `json:"ok"`
	Errors []string `json:"errors,omitempty"`
}

func taskValidate(c *cli.Context) error {
	specs, err := positional(c)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return errors.New("task validate needs at least one SPEC file")
	}
	var results []validation
	failed := 0
	for _, p := range specs {
		v := validation{File: p, OK: true}
		s, err := taskspec.Load(p)
		if err != nil {
			v.OK, v.Errors = false, taskspec.Messages(err)
			failed++
		} else {
			v.ID = s.ID
		}
		results = append(results, v)
	}
	if c.Bool("json") {
		if err := printJSON(c, results); err != nil {
			return err
		}
	} else {
		for _, v := range results {
			if v.OK {
				fmt.Fprintf(c.App.Writer, "ok    %s (task %s)\n", v.File, v.ID)
				continue
			}
			fmt.Fprintf(c.App.Writer, "FAIL  %s\n", v.File)
			for _, e := range v.Errors {
				fmt.Fprintf(c.App.Writer, "  %s\n", e)
			}
		}
	}
	if failed > 0 {
		return classed(errclass.ErrInvalid, "%d of %d specs are invalid", failed, len(results))
	}
	return nil
}

func taskUpdate(c *cli.Context) error {
	spec, err := oneArg(c, "SPEC file")
	if err != nil {
		return err
	}
	sp, err := taskspec.Load(spec)
	if err != nil {
		return cli.Exit(fmt.Sprintf("%s: %v", spec, err), 1)
	}
	t, err := clientFrom(c).UpdateTask(c.Context, sp.ID, spec)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, t)
	}
	fmt.Fprintf(c.App.Writer, "updated task %s from %s\n", t.ID, spec)
	return nil
}

func taskRm(c *cli.Context) error {
	id, err := oneArg(c, "task ID")
	if err != nil {
		return err
	}
	t, err := clientFrom(c).RemoveTask(c.Context, id, c.Bool("force"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, t)
	}
	fmt.Fprintf(c.App.Writer, "removed task %s\n", t.ID)
	return nil
}

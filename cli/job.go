package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

func jobCommand() *cli.Command {
	idArg := "ID"
	return &cli.Command{
		Name:  "job",
		Usage: "start, list, inspect, follow and cancel jobs",
		Subcommands: []*cli.Command{
			{
				Name:      "start",
				Usage:     `queue a job, e.g. job start wait --params '{"seconds":30,"interval_ms":500}'`,
				ArgsUsage: "KIND",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "task", Usage: "task `ID` the job works on"},
					&cli.StringFlag{Name: "params", Usage: "kind parameters as a JSON object"},
					jsonFlag(),
				},
				Action: jobStart,
			},
			{
				Name:  "list",
				Usage: "list jobs, newest first",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "state", Usage: "only jobs in this state (" + strings.Join(api.States, ", ") + ")"},
					&cli.StringFlag{Name: "kind", Usage: "only jobs of this kind"},
					&cli.StringFlag{Name: "task", Usage: "only jobs of this task"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "at most this many"},
					jsonFlag(),
				},
				Action: jobList,
			},
			{Name: "show", Usage: "show one job", ArgsUsage: idArg, Flags: []cli.Flag{jsonFlag()}, Action: jobShow},
			{
				Name:      "logs",
				Usage:     "print a job's events; -f follows until the job ends",
				ArgsUsage: idArg,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new events until the job ends"},
					&cli.Int64Flag{Name: "after", Usage: "only events after this sequence number"},
					jsonFlag(),
				},
				Action: jobLogs,
			},
			{Name: "cancel", Usage: "cancel a queued or running job", ArgsUsage: idArg, Flags: []cli.Flag{jsonFlag()}, Action: jobCancel},
			{Name: "retry", Usage: "queue a failed, cancelled or interrupted job again", ArgsUsage: idArg, Flags: []cli.Flag{jsonFlag()}, Action: jobRetry},
			{
				Name:      "watch",
				Usage:     "follow a job live: stage, counters, elapsed (plain lines when not on a terminal)",
				ArgsUsage: idArg,
				Flags:     []cli.Flag{jsonFlag()},
				Action:    jobWatch,
			},
		},
	}
}

func jobStart(c *cli.Context) error {
	kind, err := oneArg(c, "KIND")
	if err != nil {
		return err
	}
	req := api.JobRequest{Kind: kind, TaskID: c.String("task")}
	if p := c.String("params"); p != "" {
		if !json.Valid([]byte(p)) {
			return fmt.Errorf("--params %q is not valid JSON; quote it like '{\"seconds\":30}'", p)
		}
		req.Params = json.RawMessage(p)
	}
	cl := clientFrom(c)
	j, err := cl.SubmitJob(c.Context, req)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, j)
	}
	fmt.Fprintf(c.App.Writer, "%s\n", j.ID)
	return nil
}

func jobList(c *cli.Context) error {
	cl := clientFrom(c)
	js, err := cl.Jobs(c.Context, client.JobFilter{State: c.String("state"), Kind: c.String("kind"), TaskID: c.String("task"), Limit: c.Int("limit")})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, js)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tKIND\tTASK\tSTATE\tATTEMPT\tSTAGE\tELAPSED\tCREATED")
	for _, j := range js {
		stage := "-"
		if j.Progress != nil && j.Progress.Stage != "" {
			stage = j.Progress.Stage
		}
		task := console.JobTasks(j)
		if task == "" {
			task = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", j.ID, j.Kind, task, j.State, j.Attempt, stage, fmtDuration(elapsed(j)), fmtTime(j.Created))
	}
	return tw.Flush()
}

func jobShow(c *cli.Context) error {
	id, err := oneArg(c, "job ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.Job(c.Context, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, j)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "id:       %s\nkind:     %s\nstate:    %s\nattempt:  %d\n", j.ID, j.Kind, j.State, j.Attempt)
	if j.TaskID != "" {
		fmt.Fprintf(w, "task:     %s\n", j.TaskID)
	}
	fmt.Fprintf(w, "created:  %s\nelapsed:  %s\nevents:   %d\n", fmtTime(j.Created), fmtDuration(elapsed(j)), j.LastSeq)
	if len(j.Params) > 0 {
		fmt.Fprintf(w, "params:   %s\n", j.Params)
	}
	if j.Progress != nil {
		fmt.Fprintf(w, "stage:    %s %s\n", j.Progress.Stage, strings.Join(console.Counters(j.Progress.Counters), ", "))
	}
	if j.Error != "" {
		fmt.Fprintf(w, "error:    %s\n", j.Error)
	}
	if len(j.Result) > 0 {
		fmt.Fprintf(w, "result:   %s\n", j.Result)
	}
	fmt.Fprintf(w, "work dir: %s\n", j.WorkDir)
	return nil
}

func jobLogs(c *cli.Context) error {
	id, err := oneArg(c, "job ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	asJSON := c.Bool("json")
	if !c.Bool("follow") {
		evs, err := cl.Events(c.Context, id, c.Int64("after"))
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(c, evs)
		}
		for _, ev := range evs {
			fmt.Fprintln(c.App.Writer, fmtEvent(ev))
		}
		return nil
	}
	enc := json.NewEncoder(c.App.Writer)
	return cl.Follow(c.Context, id, c.Int64("after"), func(it api.StreamItem) error {
		if it.Event == nil {
			return nil
		}
		if asJSON {
			return enc.Encode(it.Event)
		}
		_, err := fmt.Fprintln(c.App.Writer, fmtEvent(*it.Event))
		return err
	})
}

func jobCancel(c *cli.Context) error {
	id, err := oneArg(c, "job ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.CancelJob(c.Context, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, j)
	}
	if j.State == api.StateRunning {
		fmt.Fprintf(c.App.Writer, "cancelling %s (it stops at its next safe point)\n", j.ID)
	} else {
		fmt.Fprintf(c.App.Writer, "%s %s\n", j.ID, j.State)
	}
	return nil
}

func jobRetry(c *cli.Context) error {
	id, err := oneArg(c, "job ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	j, err := cl.RetryJob(c.Context, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, j)
	}
	fmt.Fprintf(c.App.Writer, "%s queued again (attempt %d)\n", j.ID, j.Attempt)
	return nil
}

package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/errclass"
)

// cycleResume is `massctl cycle run --resume [JOB]`: queue a cycle job that
// failed, was cancelled or interrupted again (the newest such one without
// JOB). It continues where it stopped: finished searches and generation
// stages are read back, never rerun.
func cycleResume(c *cli.Context) error {
	if c.String("tasks") != "" || c.String("config") != "" {
		return usageError("--resume continues a cycle job as it was submitted: give no --tasks or --config")
	}
	args, err := positional(c)
	if err != nil {
		return usageError("%v", err)
	}
	if len(args) > 1 {
		return usageError("--resume takes at most one JOB")
	}
	cl := clientFrom(c)
	id := ""
	if len(args) == 1 {
		id = args[0]
	}
	if id == "" {
		if id, err = lastStoppedCycle(c, cl); err != nil {
			return err
		}
	}
	j, err := cl.RetryJob(c.Context, id)
	if err != nil {
		return err
	}
	return followRequeued(c, cl, j, fmt.Sprintf("cycle job %s queued again, attempt %d", j.ID, j.Attempt))
}

// lastStoppedCycle is the newest cycle job that failed, was cancelled or
// was interrupted.
func lastStoppedCycle(c *cli.Context, cl *client.Client) (string, error) {
	js, err := cl.Jobs(c.Context, client.JobFilter{Kind: generation.CycleKindName})
	if err != nil {
		return "", err
	}
	for _, j := range js {
		switch j.State {
		case api.StateFailed, api.StateCancelled, api.StateInterrupted:
			return j.ID, nil
		}
	}
	return "", classed(errclass.ErrNotFound, "no failed, cancelled or interrupted cycle job to resume (massctl job list --kind %s)", generation.CycleKindName)
}

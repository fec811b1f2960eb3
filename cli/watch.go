package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// jobWatch follows a job. On a terminal it redraws one status line (state,
// stage, counters, elapsed, last event) cut to the terminal's width and
// prints events above it; otherwise it prints one plain line per event and
// per state or progress change. It ends with a line saying the outcome and
// exits 5 (ExitJobFailed) for a failed, cancelled or interrupted job, its
// outcome and error on stderr.
func jobWatch(c *cli.Context) error {
	id, err := oneArg(c, "job ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		return cl.Follow(c.Context, id, 0, func(it api.StreamItem) error { return enc.Encode(it) })
	}
	return followJob(c.Context, cl, c.App.Writer, id)
}

// followRequeued reports job j queued again: with --json the job, with
// --detach its id; else the line queued (with the --detach hint) and then
// job watch's view of it.
func followRequeued(c *cli.Context, cl *client.Client, j api.Job, queued string) error {
	switch {
	case c.Bool("json"):
		return printJSON(c, j)
	case c.Bool("detach"):
		_, err := fmt.Fprintf(c.App.Writer, "%s\n", j.ID)
		return err
	}
	fmt.Fprintf(c.App.Writer, "%s (--detach: do not follow)\n", queued)
	return followJob(c.Context, cl, c.App.Writer, j.ID)
}

// followJob is job watch's view of job id to its end: the outcome line,
// and jobFailed with it when the job did not succeed.
func followJob(ctx context.Context, cl *client.Client, w io.Writer, id string) error {
	v := &watchView{w: w, tty: isTerminal(w)}
	var last api.Job
	stop := make(chan struct{})
	defer close(stop)
	if v.tty {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					v.redraw()
				}
			}
		}()
	}
	err := cl.Follow(ctx, id, 0, func(it api.StreamItem) error {
		if it.Job != nil {
			last = *it.Job
		}
		v.update(it)
		return nil
	})
	v.finish()
	if err != nil {
		return err
	}
	switch last.State {
	case api.StateFailed, api.StateCancelled, api.StateInterrupted:
		return jobFailed("%s", jobOutcome(last))
	}
	fmt.Fprintln(w, jobOutcome(last))
	return nil
}

type watchView struct {
	w        io.Writer
	tty      bool
	mu       sync.Mutex // the redraw ticker and the stream never interleave writes
	job      *api.Job
	lastMsg  string
	lastLine string // last plain status line printed
	drawn    bool
}

func (v *watchView) update(it api.StreamItem) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if it.Job != nil {
		j := *it.Job
		if line := statusLine(j, ""); !v.tty && line != v.lastLine {
			fmt.Fprintln(v.w, line)
			v.lastLine = line
		}
		v.job = &j
	}
	if it.Event != nil {
		line := fmtEvent(*it.Event)
		v.lastMsg = it.Event.Type
		if v.tty {
			v.clear()
			line = truncate(plainText(line), termWidth(v.w)-1)
		}
		if v.tty || it.Event.Type != "tick" {
			fmt.Fprintln(v.w, line)
		}
	}
	if v.tty {
		v.draw()
	}
}

func (v *watchView) redraw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.draw()
}

func (v *watchView) clear() {
	if v.drawn {
		fmt.Fprint(v.w, "\r\033[K")
		v.drawn = false
	}
}

func (v *watchView) draw() {
	if v.job == nil {
		return
	}
	v.clear()
	// One column short of the width: a line that fills the last column
	// makes some terminals wrap before the next carriage return.
	line := fitLine(statusSegments(*v.job, v.lastMsg), termWidth(v.w)-1)
	fmt.Fprint(v.w, "\033[1m"+line+"\033[0m")
	v.drawn = true
}

func (v *watchView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tty && v.drawn {
		fmt.Fprintln(v.w)
	}
}

// statusLine is the whole status line, for plain (non-terminal) output.
func statusLine(j api.Job, last string) string {
	return fitLine(statusSegments(j, last), 1<<20)
}

package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/api"
)

// jobWatch follows a job. On a terminal it redraws one status line (state,
// stage, counters, elapsed, last event) and prints events above it; otherwise
// it prints one plain line per event and per state or progress change.
func jobWatch(c *cli.Context) error {
	id, err := oneArg(c, "job ID")
	if err != nil {
		return err
	}
	cl := clientFrom(c)
	w := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(w)
		return cl.Follow(c.Context, id, 0, func(it api.StreamItem) error { return enc.Encode(it) })
	}
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
	err = cl.Follow(c.Context, id, 0, func(it api.StreamItem) error {
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
	if last.State == api.StateFailed {
		return cli.Exit(fmt.Sprintf("job %s failed: %s", id, last.Error), 1)
	}
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
	fmt.Fprint(v.w, "\033[1m"+statusLine(*v.job, v.lastMsg)+"\033[0m")
	v.drawn = true
}

func (v *watchView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tty && v.drawn {
		fmt.Fprintln(v.w)
	}
}

func statusLine(j api.Job, last string) string {
	parts := []string{j.ID, j.State, "elapsed " + fmtDuration(elapsed(j))}
	if j.Attempt > 1 {
		parts = append(parts, fmt.Sprintf("attempt %d", j.Attempt))
	}
	if p := j.Progress; p != nil {
		if p.Stage != "" {
			parts = append(parts, "stage "+p.Stage)
		}
		if len(p.Counters) > 0 {
			parts = append(parts, fmtCounters(p.Counters))
		}
		if p.Message != "" {
			parts = append(parts, p.Message)
		}
	}
	if last != "" {
		parts = append(parts, "last: "+last)
	}
	return strings.Join(parts, " | ")
}

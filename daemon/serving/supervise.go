package serving

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// MaxRestarts bounds the restarts of a supervised server that keeps
// exiting; a server up for StableFor counts as healthy again.
const (
	MaxRestarts = 5
	StableFor   = 10 * time.Minute
)

// output is where the server's stdout and stderr go: LogFile (appended,
// headed by the command line) or Log. The returned func closes massd's
// copy of the file.
func (c *Command) output(argv []string) (io.Writer, func(), error) {
	if c.LogFile == "" {
		return c.Log, func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(c.LogFile), 0o750); err != nil {
		return nil, nil, fmt.Errorf("serve command log: %w", err)
	}
	f, err := os.OpenFile(c.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("serve command log: %w", err)
	}
	fmt.Fprintf(f, "==> %s massd starts: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	return f, func() { f.Close() }, nil
}

// watch waits for the server's exit; one massd did not ask for (Stop
// clears c.cmd first) restarts it on the same folder and name, after a
// pause that doubles with each exit in a row, up to MaxRestarts.
func (c *Command) watch(cmd *exec.Cmd, done <-chan struct{}) {
	up := time.Now()
	<-done
	c.mu.Lock()
	if c.closed || c.cmd != cmd {
		c.mu.Unlock()
		return // stopped or replaced on purpose
	}
	model, name := c.model, c.name
	c.cmd, c.done, c.model = nil, nil, ""
	if time.Since(up) >= StableFor {
		c.restarts = 0
	}
	c.restarts++
	n := c.restarts
	c.mu.Unlock()
	log := c.Logger
	if n > MaxRestarts {
		if log != nil {
			log.Error("serve command keeps exiting; not restarted", "model", name, "exits", n-1, "log", c.LogFile)
		}
		return
	}
	if log != nil {
		log.Warn("serve command exited unasked; restarting", "model", name, "restart", n, "log", c.LogFile)
	}
	time.Sleep(time.Duration(1<<(n-1)) * time.Second)
	c.op.Lock()
	defer c.op.Unlock()
	if c.Serving() != "" || c.isClosed() {
		return // restarted or closed meanwhile
	}
	if err := c.restart(context.Background(), model, name); err != nil && log != nil {
		log.Error("restart serve command", "model", name, "err", err)
	}
}

func (c *Command) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

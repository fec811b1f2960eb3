package serving

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Placeholders in a serve command's arguments: the merged model folder and
// the name the model is served under (for --served-model-name).
const (
	ModelPlaceholder = "{model}"
	NamePlaceholder  = "{name}"
)

// Command runs a model server massd starts and stops itself.
type Command struct {
	Argv    []string      // e.g. vllm serve {model} --port 8011
	BaseURL string        // where it answers, e.g. http://127.0.0.1:8011/v1
	Ready   time.Duration // how long it may take to answer /v1/models (default 10 min)
	Grace   time.Duration // after SIGTERM, before SIGKILL (default 30 s)
	Log     io.Writer     // the server's stdout and stderr (default: discarded)
	// LogFile, when set, takes the server's stdout and stderr instead of
	// Log: appended, each start headed by its command line.
	LogFile string
	Env     []string // added to massd's environment (CUDA_VISIBLE_DEVICES=…)
	// Supervise restarts the server on its folder after an exit massd did
	// not ask for (supervise.go); Logger hears of it.
	Supervise bool
	Logger    *slog.Logger

	op       sync.Mutex // held through a (re)start
	mu       sync.Mutex
	closed   bool
	cmd      *exec.Cmd
	done     chan struct{}
	model    string
	name     string
	restarts int // unrequested exits in a row (supervise.go)
}

// Serving is the model folder the running server was started on, "" if none.
func (c *Command) Serving() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model
}

// ServedName is the model id requests must name: name when the command
// passes {name} on, else the folder (vLLM's default served name).
func (c *Command) ServedName(folder, name string) string {
	for _, a := range c.Argv {
		if strings.Contains(a, NamePlaceholder) {
			return name
		}
	}
	return folder
}

// Restart stops the server if it runs and starts it on the model folder
// under name, returning once /v1/models answers. Restarts are serialized.
func (c *Command) Restart(ctx context.Context, model, name string) error {
	c.op.Lock()
	defer c.op.Unlock()
	return c.restart(ctx, model, name)
}

// StartIdle starts the server on model under name unless one already runs
// (a generation's, started first).
func (c *Command) StartIdle(ctx context.Context, model, name string) error {
	c.op.Lock()
	defer c.op.Unlock()
	if c.Serving() != "" {
		return nil
	}
	return c.restart(ctx, model, name)
}

func (c *Command) restart(ctx context.Context, model, name string) error {
	if err := c.Stop(); err != nil {
		return err
	}
	if len(c.Argv) == 0 {
		return errors.New("serve command is empty")
	}
	argv := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		argv[i] = strings.NewReplacer(ModelPlaceholder, model, NamePlaceholder, name).Replace(a)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	out, closeLog, err := c.output(argv)
	if err != nil {
		return err
	}
	defer closeLog() // the child has its own descriptor once started
	cmd.Stdout, cmd.Stderr = out, out
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	// Its own process group, stopped as a whole; SIGTERM when massd dies,
	// so that a restarted massd finds the port free.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start serve command: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return errors.New("serve command closed")
	}
	c.cmd, c.done, c.model, c.name = cmd, done, model, name
	c.mu.Unlock()
	if err := c.waitReady(ctx, done); err != nil {
		_ = c.Stop()
		return err
	}
	if c.Supervise {
		go c.watch(cmd, done)
	}
	return nil
}

func (c *Command) waitReady(ctx context.Context, done <-chan struct{}) error {
	ready := c.Ready
	if ready == 0 {
		ready = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, ready)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := Health(ctx, c.BaseURL); err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("serve command exited before %s/models answered", c.BaseURL)
		case <-ctx.Done():
			return fmt.Errorf("serve command not healthy within %s: %w", ready, ctx.Err())
		case <-tick.C:
		}
	}
}

// Close stops the server for good: a start in flight or later fails.
func (c *Command) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.Stop()
}

// Stop ends the server's process group: SIGTERM, then SIGKILL after Grace.
func (c *Command) Stop() error {
	c.mu.Lock()
	cmd, done := c.cmd, c.done
	c.cmd, c.done, c.model = nil, nil, ""
	c.mu.Unlock()
	if cmd == nil {
		return nil
	}
	grace := c.Grace
	if grace == 0 {
		grace = 30 * time.Second
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	return nil
}

// Health asks GET base/models and wants a list with at least one model.
func Health(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/models", nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("models: %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxReply)).Decode(&list); err != nil {
		return fmt.Errorf("models: %w", err)
	}
	if len(list.Data) == 0 {
		return errors.New("models: the server lists none")
	}
	return nil
}

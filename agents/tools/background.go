package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/mass-dev/mass/sandbox"
)

// background serves run_shell_command with is_background true: the command
// starts in the agent's own sandbox and keeps running after the call, until
// it exits or the agent's sandbox is removed (sandbox.Backgrounder). Its
// output is not captured.
func (e *Env) background(ctx context.Context, cmd, dir string, req sandbox.ExecRequest, o *outcome) error {
	o.rec.Path = dir
	o.merge(map[string]any{"command": Cap(cmd, 4096), "is_background": true})
	bg, ok := e.Sandbox.(sandbox.Backgrounder)
	if !ok {
		return errBackground
	}
	pid, err := bg.Background(ctx, req)
	if errors.Is(err, sandbox.ErrDenied) {
		o.detail["background_error"] = err.Error()
		return errBackground
	}
	if err != nil {
		return err
	}
	o.detail["pid"] = pid
	if pid == 0 {
		o.text = fmt.Sprintf("Command: %s\nDirectory: %s\nThe background command had already ended when it was checked; its output is not captured.", cmd, dir)
		return nil
	}
	o.text = fmt.Sprintf("Command: %s\nDirectory: %s\nStarted in the background (PID %d). Its output is not captured: redirect it to a file to read it later. It runs until it exits or you finish.", cmd, dir, pid)
	return nil
}

// HoldBackground freezes the agent's background processes while its
// sub-agents work in the shared workspace; release lets them run again.
// It does nothing for a sandbox without background processes.
func (e *Env) HoldBackground(ctx context.Context) (release func(), err error) {
	if e == nil {
		return func() {}, nil
	}
	bg, ok := e.Sandbox.(sandbox.Backgrounder)
	if !ok {
		return func() {}, nil
	}
	rel, err := bg.Hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("hold background processes of %s: %w", e.Agent, err)
	}
	return func() { rel(context.WithoutCancel(ctx)) }, nil
}

package episode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/agent"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/loop"
	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/agents/tools"
	"github.com/mass-dev/mass/sandbox"
)

// cleanupTimeout bounds work done after an agent's context has ended.
const cleanupTimeout = 30 * time.Second

// runAgent starts a sandbox for agent id, runs its loop on user and tears
// the sandbox down, ledgering agent_start and agent_finish.
func (e *run) runAgent(ctx context.Context, id, role, parent, user string) (agent.Result, error) {
	spec := sandbox.Spec{Episode: e.opts.ID, Agent: id, Image: e.deps.Image, Policy: e.policy()}
	sb, err := e.deps.Runtime.Create(ctx, spec)
	if err != nil {
		return agent.Result{}, fmt.Errorf("create sandbox for %s: %w", id, err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := sb.Remove(cctx); err != nil {
			e.log.Warn("remove sandbox", "agent", id, "err", err)
		}
	}()
	if _, err := e.led.Append(ledger.Record{Agent: id, Tool: ledger.ToolAgentStart, OK: true,
		Detail: mustJSON(map[string]any{"role": role, "parent": parent, "sandbox": sb.ID(), "model": e.client.Name()})}); err != nil {
		return agent.Result{}, fmt.Errorf("ledger: %w", err)
	}
	e.prog.agentStarted(id)
	if role == record.RoleOrchestrator {
		// Baseline: the workspace as the inputs left it, so that the first
		// agent_finish lists only what the team changed.
		if err := e.baseline(ctx, sb); err != nil {
			return agent.Result{}, err
		}
	}
	cfg, system, err := e.agentConfig(sb, id, role, parent)
	if err != nil {
		return agent.Result{}, err
	}
	start := time.Now()
	res, runErr := agent.Run(ctx, cfg, system, user)
	if bg, ok := sb.(sandbox.Backgrounder); ok {
		// Nothing the agent left running may write after it finished.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		if err := bg.EndBackground(cctx); err != nil {
			e.log.Warn("end background processes", "agent", id, "err", err)
		}
		cancel()
	}
	e.prog.agentFinished(id, res)
	return res, e.finishAgent(ctx, sb, id, role, parent, start, res, runErr)
}

// agentConfig is the loop configuration and system prompt of agent id: its
// role's tools, its limits, and for the orchestrator the delegation to workers.
func (e *run) agentConfig(sb sandbox.Sandbox, id, role, parent string) (agent.Config, string, error) {
	ts := tools.Worker()
	if role == record.RoleOrchestrator {
		ts = tools.Orchestrator()
	}
	env := &tools.Env{Agent: id, Sandbox: sb, Ledger: e.led, Protected: e.opts.Task.ProtectedPaths}
	if role == record.RoleOrchestrator {
		env.Delegate = func(ctx context.Context, description, prompt, subagentType string) (string, string, error) {
			return e.delegate(ctx, id, prompt)
		}
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	tmplRole := "worker"
	if role == record.RoleOrchestrator {
		tmplRole = "orchestrator"
	}
	system, err := prompts.System(tmplRole, prompts.Data{Agent: id, Parent: parent, Workspace: sandbox.WorkspaceMount,
		Protected: e.opts.Task.ProtectedPaths, ToolNames: strings.Join(names, ", ")})
	if err != nil {
		return agent.Config{}, "", err
	}
	turns := e.opts.Task.Limits.AgentTurns
	if turns <= 0 {
		turns = DefaultAgentTurns
	}
	wall := e.opts.Task.Limits.AgentWallTime
	if wall <= 0 {
		wall = e.deps.AgentWallTime
	}
	return agent.Config{
		ID: id, Role: role, Parent: parent, Client: e.client, Seed: e.opts.Seed, Tools: ts, Env: env, Rec: e.rec, Ledger: e.led,
		Limits:   agent.Limits{Turns: turns, Tokens: e.opts.Task.Limits.Tokens, WallTime: wall},
		Loop:     e.deps.Loop,
		Compress: e.deps.Compress,
		Observe:  e.prog.observe,
		Log:      e.log,
	}, system, nil
}

// finishAgent saves the agent's manifest and ledgers agent_finish; it
// returns runErr, or the ledger's error when the run itself succeeded.
func (e *run) finishAgent(ctx context.Context, sb sandbox.Sandbox, id, role, parent string, start time.Time, res agent.Result, runErr error) error {
	// The manifest and agent_finish are written even when ctx has ended, so
	// the audit can attribute what the agent changed.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	fin := map[string]any{"role": role, "parent": parent, "stop": res.Stop, "turns": res.Turns,
		"tool_calls": res.ToolCalls, "prompt_tokens": res.PromptTokens, "completion_tokens": res.CompletionTokens,
		"compressions": res.Compressions,
		"wall_ms":      time.Since(start).Milliseconds()}
	if runErr != nil {
		fin["error"] = runErr.Error()
	}
	if digest, changed, err := e.saveManifest(cctx, sb, id); err != nil {
		fin["manifest_error"] = err.Error()
	} else {
		fin["manifest_sha256"], fin["changed"] = digest, changed
	}
	if _, err := e.led.Append(ledger.Record{Agent: id, Tool: ledger.ToolAgentFinish, OK: runErr == nil,
		Error: errString(runErr), DurationMS: float64(time.Since(start).Microseconds()) / 1000, Detail: mustJSON(fin)}); err != nil && runErr == nil {
		runErr = fmt.Errorf("ledger: %w", err)
	}
	return runErr
}

// delegate runs one worker for the orchestrator's agent tool. Failures of
// the worker's own making (loop, limits) come back to the orchestrator as a
// tool error; endpoint and infrastructure failures end the episode.
func (e *run) delegate(ctx context.Context, parent, prompt string) (string, string, error) {
	var id string
	if err := tools.InOrder(ctx, func() {
		e.mu.Lock()
		e.workers++
		id = fmt.Sprintf("worker-%d", e.workers)
		e.mu.Unlock()
	}); err != nil {
		return "", "", err
	}
	release, err := e.slots.acquire(ctx)
	if err != nil {
		return "", id, err
	}
	defer release()
	res, err := e.runAgent(ctx, id, record.RoleWorker, parent, prompt)
	var h *loop.Halt
	switch {
	case err == nil:
		return res.Final, id, nil
	case errors.As(err, &h), errors.Is(err, agent.ErrLimit) && ctx.Err() == nil:
		return "", id, fmt.Errorf("stopped before finishing: %v", err)
	}
	return "", id, tools.Fatal(err)
}

func (e *run) policy() sandbox.Policy {
	p := e.deps.Policy
	if p.Runtime == "" {
		p = sandbox.DefaultPolicy()
	}
	if l := e.opts.Task.Limits; l.CPUs > 0 {
		p.NanoCPUs = int64(l.CPUs * 1e9)
	}
	if l := e.opts.Task.Limits; l.MemoryBytes > 0 {
		p.MemoryBytes = l.MemoryBytes
	}
	p.GPUs = e.opts.Task.Limits.GPUs
	if nw := e.opts.Task.Network; nw != nil {
		p.Egress = &sandbox.Egress{Allow: append([]string(nil), nw.Allow...), MaxBytes: nw.MaxBytes}
	}
	return p
}

// saveManifest writes manifests/<agent>.json and returns its digest and the
// paths changed since the previous agent finished.
func (e *run) saveManifest(ctx context.Context, sb sandbox.Sandbox, id string) (string, []string, error) {
	m, err := sb.Files().Manifest(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("manifest of %s: %w", id, err)
	}
	if m == nil {
		m = []sandbox.FileInfo{}
	}
	if err := writeJSON(filepath.Join(e.opts.Dir, ManifestsDir, id+".json"), m); err != nil {
		return "", nil, err
	}
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	now := make(map[string]string, len(m))
	for _, f := range m {
		now[f.Path] = f.SHA256
	}
	e.mu.Lock()
	var changed []string
	for p, h := range now {
		if old, ok := e.manifest[p]; !ok || old != h {
			changed = append(changed, p)
		}
	}
	for p := range e.manifest {
		if _, ok := now[p]; !ok {
			changed = append(changed, p) // removed
		}
	}
	e.manifest = now
	e.mu.Unlock()
	slices.Sort(changed)
	if changed == nil {
		changed = []string{}
	}
	return hex.EncodeToString(sum[:]), changed, nil
}

func (e *run) baseline(ctx context.Context, sb sandbox.Sandbox) error {
	m, err := sb.Files().Manifest(ctx)
	if err != nil {
		return fmt.Errorf("baseline manifest: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.manifest = make(map[string]string, len(m))
	for _, f := range m {
		e.manifest[f.Path] = f.SHA256
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	return b
}

package sft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/trainer/chat"
)

// SynthSpec describes a synthetic episode for tests and benchmarks: an orchestrator that
// delegates to workers, each thread a chain of tool-calling turns, recorded in the
// api_requests.jsonl format of the agent runtime.
type SynthSpec struct {
	EpisodeID, TaskID string
	Workers           int // worker threads
	Turns             int // model calls per thread
	ResponseWords     int // words of reasoning + content per response
	ToolWords         int // words per tool output
	Seed              uint64
}

var synthWords = strings.Fields(`the model data train loss value file path run test check result error
import numpy pandas def return class self for in if else while print open read write json csv
window token worker agent orchestrator verify artifact metric split validation leakage future
backtest signal price return volatility sharpe drawdown feature label fold seed config script
0 1 2 3 10 42 100 3.14 0.05 1e-3 = == != <= >= ( ) [ ] { } : , . ; + - * / _ # " ' \n`)

// SynthPrompts returns the bare task prompt, workflow and teacher prompt of a synthetic task.
func SynthPrompts(task string) (prompt, workflow, teacher string) {
	prompt = "Task " + task + ": build a leakage-free backtest of the momentum signal in /workspace/data."
	workflow = `[{"agent_id": "data", "role": "data engineer", "instruction": "clean /workspace/data"}]`
	teacher = prompt + "\n\n## Workflow\n" + workflow + "\n\n## Execution directive\nDelegate every non-orchestrator role to a real sub-agent."
	return prompt, workflow, teacher
}

// WriteSyntheticEpisode writes dir/episode.json, dir/api_requests.jsonl
// and a run_status.json of a clean, completed episode (so the eligibility
// predicate admits it).
func WriteSyntheticEpisode(dir string, s SynthSpec) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create episode dir: %w", err)
	}
	if err := WriteCleanStatus(dir, s.EpisodeID); err != nil {
		return err
	}
	prompt, workflow, teacher := SynthPrompts(s.TaskID)
	meta := map[string]any{"episode_id": s.EpisodeID, "task_id": s.TaskID, "mode": "workflow", "model": "synthetic",
		"prompt": prompt, "workflow": workflow, "teacher_prompt": teacher, "started": time.Unix(0, 0).UTC().Format(time.RFC3339Nano)}
	mb, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, episodefmt.EpisodeFile), mb, 0o644); err != nil {
		return fmt.Errorf("write episode.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, episodefmt.RequestsFile))
	if err != nil {
		return fmt.Errorf("create api_requests: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	g := &synth{spec: s, rng: rand.New(rand.NewPCG(s.Seed, 7)), w: w, episode: s.EpisodeID}
	g.thread("orchestrator", RoleOrchestrator, "", teacher)
	for k := 1; k <= s.Workers; k++ {
		g.thread(fmt.Sprintf("worker-%d", k), RoleWorker, "orchestrator", fmt.Sprintf("Assignment %d: write /workspace/step%d.py and verify it with `python3 /workspace/step%d.py --check`.", k, k, k))
	}
	if g.err != nil {
		return g.err
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write api_requests: %w", err)
	}
	return f.Close()
}

type synth struct {
	spec    SynthSpec
	rng     *rand.Rand
	w       *bufio.Writer
	episode string
	seq     int
	err     error
}

func (g *synth) text(n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		w := synthWords[g.rng.IntN(len(synthWords))]
		switch {
		case w == `\n`:
			sb.WriteByte('\n')
			continue
		case i > 0:
			sb.WriteByte(' ')
		}
		sb.WriteString(w)
	}
	return sb.String()
}

var synthTools = []map[string]any{
	{"type": "function", "function": map[string]any{"name": "run_shell_command", "description": "Run a shell command",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []string{"command"}}}},
	{"type": "function", "function": map[string]any{"name": "agent", "description": "Delegate to a sub-agent",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"description": map[string]any{"type": "string"}, "prompt": map[string]any{"type": "string"}}, "required": []string{"prompt"}}}},
}

func (g *synth) thread(id, role, parent, firstUser string) {
	msgs := []chat.Message{
		{Role: "system", Content: "You are " + id + ", an agent working in /workspace."},
		{Role: "user", Content: firstUser},
	}
	for t := 0; t < g.spec.Turns && g.err == nil; t++ {
		reasoning := g.text(g.spec.ResponseWords / 2)
		last := t == g.spec.Turns-1
		resp := chat.Message{Role: "assistant", Content: g.text(g.spec.ResponseWords / 4), Reasoning: &reasoning}
		finish := "stop"
		if !last {
			args, _ := chat.ParseJSON(fmt.Sprintf(`{"command": %q}`, g.text(g.spec.ResponseWords/4)))
			resp.ToolCalls = []chat.ToolCall{{ID: fmt.Sprintf("call_%d", t), Name: "run_shell_command", Arguments: args}}
			finish = "tool_calls"
		}
		g.record(id, role, parent, msgs, resp, finish)
		if last {
			break
		}
		// The runtime sends history back without reasoning; the builder restores it.
		sent := resp
		sent.Reasoning = nil
		msgs = append(msgs, sent, chat.Message{Role: "tool", ToolCallID: fmt.Sprintf("call_%d", t), Content: g.text(g.spec.ToolWords)})
	}
}

func (g *synth) record(agent, role, parent string, msgs []chat.Message, resp chat.Message, finish string) {
	g.seq++
	var calls []map[string]any
	for _, tc := range resp.ToolCalls {
		calls = append(calls, map[string]any{"id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments.Python()}})
	}
	rec := map[string]any{
		"seq": g.seq, "ts": time.Unix(int64(g.seq), 0).UTC().Format(time.RFC3339Nano), "episode": g.episode,
		"agent": agent, "thread": agent, "role": role, "parent": parent,
		"request": map[string]any{"model": "synthetic", "messages": msgs, "tools": synthTools,
			"sampling":   map[string]any{"temperature": 0.6, "top_p": 0.95, "top_k": 20, "max_tokens": 32768},
			"extra_body": map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": true}}},
		"response": map[string]any{"content": resp.Content, "reasoning_content": *resp.Reasoning, "tool_calls": calls,
			"finish_reason": finish, "usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}},
		"status": "ok", "error": "", "duration_ms": 1.0,
	}
	b, err := json.Marshal(rec)
	if err != nil {
		g.err = fmt.Errorf("encode record: %w", err)
		return
	}
	b = append(b, '\n')
	if _, err := g.w.Write(b); err != nil {
		g.err = fmt.Errorf("write api_requests: %w", err)
	}
}

// WriteCleanStatus writes the run_status.json of a completed episode whose
// outputs exist and whose guards found nothing (tests and benchmarks).
func WriteCleanStatus(dir, episode string) error {
	st := map[string]any{"episode_id": episode, "exit": "completed", "success": true, "outputs_present": true,
		"guards": map[string]any{"integrity_checked": true}}
	b, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, "run_status.json"), b, 0o644); err != nil {
		return fmt.Errorf("write run_status.json: %w", err)
	}
	return nil
}

package judge

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"
)

// Judge-agent mount points: the two workspaces inside the judge's own
// workspace, read-only (the sandbox mounts one workspace per episode at
// /workspace, so the two sides live below it).
const (
	AgentDirA = "/workspace/judge/A"
	AgentDirB = "/workspace/judge/B"
)

// AgentMarker starts every agent-mode evaluator prompt.
const AgentMarker = "MASS EVALUATOR (agent mode):"

// AgentRequest is one judge-agent episode: both export tars are mounted
// read-only at AgentDirA and AgentDirB.
type AgentRequest struct {
	Key     string
	Attempt int
	Prompt  string
	A, B    string // export tars shown as A and B
	Model   string
	Seed    int64
}

// AgentAnswer is the judge agent's final answer and its episode.
type AgentAnswer struct {
	Final            string
	EpisodeID        string
	PromptTokens     int64
	CompletionTokens int64
	ModelTime        time.Duration
}

// AgentRunner runs judge-agent episodes (massd's composition implements it
// on the episode runner: hardened containers, no network, ledgered).
type AgentRunner interface {
	RunJudge(ctx context.Context, req AgentRequest) (AgentAnswer, error)
}

// AgentPrompt renders the agent-mode prompt, listing earlier parse errors.
func AgentPrompt(t Task, errs []string) (string, error) {
	var b bytes.Buffer
	data := map[string]any{"Persona": Persona(t.Domain), "Task": strings.TrimSpace(t.Prompt), "Required": t.Required,
		"DirA": AgentDirA, "DirB": AgentDirB, "Errors": errs}
	if err := tmpl.ExecuteTemplate(&b, "agent", data); err != nil {
		return "", fmt.Errorf("render agent evaluator prompt: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

// RunAgent makes one agent-mode judgment: up to req.Attempts judge
// episodes, each told why the earlier final answers could not be used;
// then the judgment is invalid. Episodes are kept in Result.Episodes.
func RunAgent(ctx context.Context, ar AgentRunner, req Request) (Result, Prompt, error) {
	start := time.Now()
	a, b := req.First, req.Second
	if Swapped(req.Seed, req.Key) {
		a, b = b, a
	}
	res := Result{Key: req.Key, Model: req.Model, Seed: req.Seed, Mode: "agent", A: a.Label, B: b.Label,
		Swapped: a.Label != req.First.Label, Status: StatusInvalid, Winner: StatusInvalid}
	var p Prompt
	for i := 1; i <= req.attempts(); i++ {
		text, err := AgentPrompt(req.Task, res.Errors)
		if err != nil {
			return res, p, err
		}
		p = Prompt{User: text}
		ans, err := ar.RunJudge(ctx, AgentRequest{Key: req.Key, Attempt: i, Prompt: text, A: a.Tar, B: b.Tar, Model: req.Model, Seed: req.Seed + int64(i-1)})
		res.Attempts++
		if ctx.Err() != nil {
			return res, p, ctx.Err()
		}
		if ans.EpisodeID != "" {
			res.Episodes = append(res.Episodes, ans.EpisodeID)
		}
		res.PromptTokens += ans.PromptTokens
		res.CompletionTokens += ans.CompletionTokens
		res.ModelTime += ans.ModelTime
		if err != nil {
			res.Errors = append(res.Errors, "judge episode: "+err.Error())
			continue
		}
		v, err := ParseVerdict(ans.Final)
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
			continue
		}
		res.Status, res.Winner, res.Rationale = StatusValid, v.Winner, v.Rationale
		res.WinnerLabel = map[string]string{WinnerA: a.Label, WinnerB: b.Label}[v.Winner]
		break
	}
	res.Duration = time.Since(start)
	return res, p, nil
}

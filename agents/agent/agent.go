// Package agent runs one agent's loop: send the conversation to the model,
// record the exchange, execute the tool calls in the agent's sandbox, and
// repeat until a final answer, a limit, or a loop halt.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/loop"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/agents/tools"
)

// Stop reasons.
const (
	StopFinal  = "final"
	StopTurns  = "turn_limit"
	StopTokens = "token_limit"
	StopWall   = "wall_time"
	StopLoop   = "loop"
)

// ErrLimit is returned when an agent exhausts its turns, tokens or wall time.
var ErrLimit = errors.New("agent limit reached")

// Limits bound one agent; zero fields mean unlimited (the episode clock still applies).
type Limits struct {
	Turns  int
	Tokens int64
	// WallTime bounds the agent's own running time: its clock stops while a
	// sub-agent it started with the agent tool runs.
	WallTime time.Duration
}

// Config is everything one agent run needs.
type Config struct {
	ID     string // agent and thread id
	Role   string // record.RoleOrchestrator or record.RoleWorker
	Parent string
	Client model.Client
	// Seed, when set, is the sampling seed of every request (the episode's seed).
	Seed   *int
	Tools  []tools.Spec
	Env    *tools.Env // executes tool calls in the agent's sandbox
	Rec    *record.Writer
	Ledger tools.Ledger
	Limits Limits
	Loop   loop.Config
	// Compress configures history compression near the context window.
	Compress Compression
	// Observe, when set, sees every turn and tool call (progress); it must not block.
	Observe func(Event)
	Log     *slog.Logger
}

// Event is one progress step of an agent.
type Event struct {
	Agent            string
	Type             string // "turn" or "tool"
	Tool             string
	ArgsSummary      string
	OK               bool
	PromptTokens     int
	CompletionTokens int
	ModelTime        time.Duration
	ToolTime         time.Duration
}

// Result is what an agent run produced.
type Result struct {
	Final            string
	Stop             string
	Turns            int
	ToolCalls        int
	PromptTokens     int64
	CompletionTokens int64
	Halt             *loop.Halt
	// Compressions counts the history compressions of the run.
	Compressions int
	// Messages is the conversation as last sent (after any compression).
	Messages []openai.ChatCompletionMessage
}

// Run drives the agent from its system prompt and first user message. The
// returned error wraps model.ErrEndpoint (endpoint failed after retries),
// ErrLimit, a *loop.Halt, a ledger or recording failure, or ctx.Err(); the
// Result is filled as far as the agent got in every case.
func Run(ctx context.Context, c Config, system, user string) (Result, error) {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	log := c.Log.With("agent", c.ID)
	ctx, clock := startWallClock(ctx, c.Limits.WallTime)
	defer clock.stop()
	det := loop.New(c.Loop)
	oaTools := tools.OpenAI(c.Tools)
	res := Result{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}}
	var comp compressor
	for {
		if err := c.checkBudget(&res); err != nil {
			return res, err
		}
		if err := c.maybeCompress(ctx, &comp, &res); err != nil {
			return res, err
		}
		res.Compressions = comp.done
		msg, err := c.turn(ctx, oaTools, &res, &comp)
		if err != nil {
			return res, err
		}
		calls := make([][2]string, len(msg.ToolCalls))
		for i, tc := range msg.ToolCalls {
			calls[i] = [2]string{tc.Function.Name, tc.Function.Arguments}
		}
		if h := det.Turn(msg.ReasoningContent, msg.Content, calls); h != nil {
			res.Halt, res.Stop = h, StopLoop
			log.Warn("loop halt", "rule", h.Rule, "detail", h.Detail)
			if _, err := c.Ledger.Append(ledger.Record{Agent: c.ID, Tool: ledger.ToolLoopHalt, Error: h.Error(),
				Detail: mustJSON(map[string]any{"rule": h.Rule, "detail": h.Detail, "turn": res.Turns})}); err != nil {
				return res, fmt.Errorf("ledger: %w", err)
			}
			return res, h
		}
		if len(msg.ToolCalls) == 0 {
			res.Final, res.Stop = msg.Content, StopFinal
			return res, nil
		}
		if err := c.callTools(ctx, clock, msg.ToolCalls, &res); err != nil {
			return res, err
		}
	}
}

// checkBudget stops the agent once it used its turns or tokens.
func (c Config) checkBudget(res *Result) error {
	if c.Limits.Turns > 0 && res.Turns >= c.Limits.Turns {
		res.Stop = StopTurns
		return fmt.Errorf("%w: %s used its %d turns", ErrLimit, c.ID, c.Limits.Turns)
	}
	if c.Limits.Tokens > 0 && res.PromptTokens+res.CompletionTokens >= c.Limits.Tokens {
		res.Stop = StopTokens
		return fmt.Errorf("%w: %s used %d of %d tokens", ErrLimit, c.ID, res.PromptTokens+res.CompletionTokens, c.Limits.Tokens)
	}
	return nil
}

// turn makes one model call on the conversation so far, records it and
// appends the reply to res.
func (c Config) turn(ctx context.Context, oaTools []openai.Tool, res *Result, comp *compressor) (openai.ChatCompletionMessage, error) {
	msgs := res.Messages[:len(res.Messages):len(res.Messages)]
	t0 := time.Now()
	resp, err := c.Client.Chat(ctx, model.Request{Messages: msgs, Tools: oaTools, Seed: c.Seed})
	t1 := time.Now()
	rr := record.Record{
		TS: t0, TSEnd: t1, Agent: c.ID, Thread: c.ID, Role: c.Role, Parent: c.Parent,
		Request: record.Request{Model: c.Client.Model(), Messages: msgs, Tools: oaTools,
			Sampling: c.sampling(), ExtraBody: c.Client.ExtraBody()},
		Status: record.StatusOK, DurationMS: float64(t1.Sub(t0).Microseconds()) / 1000, Attempts: resp.Attempts,
		Compression: comp.pending,
	}
	comp.pending = nil
	if err != nil {
		return openai.ChatCompletionMessage{}, c.failedCall(ctx, rr, res, err)
	}
	rr.Response = record.FromModel(resp)
	msg := rr.Response.Message()
	normalizeToolCalls(msg.ToolCalls, res.Turns+1)
	rr.Response.ToolCalls = msg.ToolCalls
	if _, rerr := c.Rec.Append(rr); rerr != nil {
		return msg, fmt.Errorf("record model call: %w", rerr)
	}
	res.Turns++
	comp.lastPrompt = resp.Usage.PromptTokens
	res.PromptTokens += int64(resp.Usage.PromptTokens)
	res.CompletionTokens += int64(resp.Usage.CompletionTokens)
	res.Messages = append(res.Messages, msg)
	c.observe(Event{Agent: c.ID, Type: "turn", OK: true, PromptTokens: resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens, ModelTime: resp.ModelTime})
	return msg, nil
}

// failedCall classifies and records a model call that returned err.
func (c Config) failedCall(ctx context.Context, rr record.Record, res *Result, err error) error {
	if ctx.Err() != nil {
		// The call was in flight when the clock ran out: the request, the
		// attempts made and how long it waited are recorded, with no reply.
		rr.Status = record.StatusError
		rr.Error = fmt.Sprintf("cut off in flight after %.0f ms by %v; no reply was received", rr.DurationMS, context.Cause(ctx))
		if _, rerr := c.Rec.Append(rr); rerr != nil && c.Log != nil {
			c.Log.Warn("record a cut-off model call", "agent", c.ID, "err", rerr)
		}
		if ranOut(ctx) {
			res.Stop = StopWall
			return fmt.Errorf("%w: %s ran past its wall time %s", ErrLimit, c.ID, c.Limits.WallTime)
		}
		return ctx.Err()
	}
	rr.Status, rr.Error = record.StatusError, err.Error()
	if _, rerr := c.Rec.Append(rr); rerr != nil {
		return fmt.Errorf("record model call: %w", rerr)
	}
	return err
}

// normalizeToolCalls gives every tool call of turn an id and a type and
// drops the streaming index, so the recording and the next request agree.
func normalizeToolCalls(tcs []openai.ToolCall, turn int) {
	for i := range tcs {
		if tcs[i].ID == "" {
			tcs[i].ID = fmt.Sprintf("call_%d_%d", turn, i+1)
		}
		if tcs[i].Type == "" {
			tcs[i].Type = openai.ToolTypeFunction
		}
		tcs[i].Index = nil
	}
}

// callTools runs the tool calls of one turn and appends their results to
// res in call order. A run of consecutive agent calls goes out at once
// (parallel.go); every other call runs alone, in order.
func (c Config) callTools(ctx context.Context, clock *wallClock, tcs []openai.ToolCall, res *Result) error {
	for i := 0; i < len(tcs); {
		j := i + 1
		if isAgentCall(tcs[i]) {
			for j < len(tcs) && isAgentCall(tcs[j]) {
				j++
			}
		}
		var outs []callOutcome
		if j-i > 1 {
			outs = c.callParallel(ctx, clock, tcs[i:j])
		} else {
			outs = []callOutcome{c.callOne(ctx, clock, tcs[i])}
		}
		for k, o := range outs {
			if o.err != nil {
				if ranOut(ctx) {
					res.Stop = StopWall
					return fmt.Errorf("%w: %s ran past its wall time %s", ErrLimit, c.ID, c.Limits.WallTime)
				}
				return o.err
			}
			tc := tcs[i+k]
			res.ToolCalls++
			res.Messages = append(res.Messages, openai.ChatCompletionMessage{
				Role: openai.ChatMessageRoleTool, Content: o.out.Text, ToolCallID: tc.ID,
			})
			c.observe(Event{Agent: c.ID, Type: "tool", Tool: tc.Function.Name, OK: o.out.OK,
				ArgsSummary: summarize(tc.Function.Arguments), ToolTime: o.took})
		}
		i = j
	}
	return nil
}

func (c Config) observe(e Event) {
	if c.Observe != nil {
		c.Observe(e)
	}
}

// summarize shortens tool arguments for status displays.
func summarize(args string) string { return tools.Cap(args, 200) }

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// sampling is what a request carries: the client's, with the run's seed.
func (c Config) sampling() model.Sampling {
	s := c.Client.Sampling()
	if c.Seed != nil {
		s.Seed = c.Seed
	}
	return s
}

package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/tools"
)

// callOutcome is one tool call's result, or the error that ends the agent.
type callOutcome struct {
	out  tools.Result
	err  error
	took time.Duration
}

func isAgentCall(tc openai.ToolCall) bool { return tools.Canonical(tc.Function.Name) == tools.Agent }

// callOne runs one tool call. While a sub-agent runs the agent's clock
// stops (the sub-agent's own wall time bounds it) and its background
// processes are held.
func (c Config) callOne(ctx context.Context, clock *wallClock, tc openai.ToolCall) callOutcome {
	t := time.Now()
	if isAgentCall(tc) {
		clock.pause()
		defer clock.resume()
		release, err := c.Env.HoldBackground(ctx)
		if err != nil {
			return callOutcome{err: err}
		}
		defer release()
	}
	out, err := c.Env.Call(ctx, tc.Function.Name, tc.Function.Arguments)
	return callOutcome{out: out, err: err, took: time.Since(t)}
}

// callParallel runs several agent calls of one message at the same time,
// as qwen-code does; the episode's delegate bounds how many sub-agents run
// at once. Sub-agents are named in call order (tools.InOrder). When one
// call fails the agent, the others are cancelled and every call is waited
// for, so no sub-agent outlives the turn.
func (c Config) callParallel(ctx context.Context, clock *wallClock, tcs []openai.ToolCall) []callOutcome {
	clock.pause()
	defer clock.resume()
	outs := make([]callOutcome, len(tcs))
	release, err := c.Env.HoldBackground(ctx)
	if err != nil {
		for i := range outs {
			outs[i].err = err
		}
		return outs
	}
	defer release()
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var prev chan struct{}
	for i, tc := range tcs {
		done := make(chan struct{})
		cctx := tools.WithTurnOrder(gctx, prev, done)
		prev = done
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			out, err := c.Env.Call(cctx, tc.Function.Name, tc.Function.Arguments)
			outs[i] = callOutcome{out: out, err: err, took: time.Since(t)}
			if err != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	// A call cancelled because another failed reports that failure.
	var root error
	for _, o := range outs {
		if o.err != nil && (root == nil || errors.Is(root, context.Canceled)) {
			root = o.err
		}
	}
	for i := range outs {
		if outs[i].err != nil {
			outs[i].err = root
		}
	}
	return outs
}

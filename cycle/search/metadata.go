package search

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ToolCall is one of the last tool calls of an episode, as the optimizer
// sees it (the reference's failure.last_tool_calls_most_recent_first).
type ToolCall struct {
	Tool string `json:"tool"`
	Args string `json:"args"`
}

// Caps of the failure record (the reference's run_episode.sh numbers).
const (
	failureMessageChars = 1500
	toolArgsChars       = 200
	lastToolCalls       = 5
)

// runStatus is the execution metadata the optimizer reads, in the shape
// of the reference's run_status.json fields that matter to it. It never
// holds the grade, the guards or the audit.
type runStatus struct {
	ExitCode      int            `json:"exit_code"`
	Success       bool           `json:"trace_has_success_result"`
	Failure       *runFailure    `json:"failure"`
	LoopHalt      bool           `json:"loop_detection_halted_an_agent"`
	PriorFailures []priorFailure `json:"prior_failures,omitempty"`
}

type runFailure struct {
	Subtype   string     `json:"subtype"`
	Message   *string    `json:"message"`
	LastCalls []ToolCall `json:"last_tool_calls_most_recent_first"`
}

type priorFailure struct {
	Version int `json:"version"`
	runFailure
}

// failureOf is the failure record of an episode that did not complete;
// nil for one that did. The trace "succeeded" when the orchestrator gave
// its final answer (a grade is never consulted).
func failureOf(ep EpisodeResult) *runFailure {
	if ep.Exit == "completed" {
		return nil
	}
	f := &runFailure{Subtype: ep.Failure, LastCalls: []ToolCall{}}
	if f.Subtype == "" {
		f.Subtype = "error"
	}
	if m := firstChars(ep.FailureMessage, failureMessageChars); m != "" {
		f.Message = &m
	}
	for i := len(ep.LastToolCalls) - 1; i >= 0 && len(f.LastCalls) < lastToolCalls; i-- {
		c := ep.LastToolCalls[i]
		f.LastCalls = append(f.LastCalls, ToolCall{Tool: c.Tool, Args: firstChars(c.Args, toolArgsChars)})
	}
	return f
}

// ExecutionMetadata is section 2b of the optimizer prompt: the current
// episode's status as indented JSON, then the reference's FAILURE NOTICE
// (with RECURRENT FAILURE when an earlier version also failed) or, for a
// run that completed after earlier failures, RESOLVED FAILURE HISTORY.
// prior are the episodes of the earlier versions, oldest first.
func ExecutionMetadata(cur EpisodeResult, prior map[int]EpisodeResult, current int) string {
	st := runStatus{ExitCode: 1, Failure: failureOf(cur), LoopHalt: cur.LoopHalt}
	if st.Failure == nil {
		st.ExitCode, st.Success = 0, true
	}
	for k := 0; k < current; k++ {
		if ep, ok := prior[k]; ok {
			if f := failureOf(ep); f != nil {
				st.PriorFailures = append(st.PriorFailures, priorFailure{Version: k, runFailure: *f})
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(st)
	text := strings.TrimSuffix(b.String(), "\n")
	switch {
	case !st.Success:
		text += "\n\n" + failureNotice
		if len(st.PriorFailures) > 0 {
			text += "\n" + recurrentNotice
		}
	case len(st.PriorFailures) > 0:
		text += "\n\n" + resolvedNotice
	}
	return text
}

const failureNotice = "FAILURE NOTICE: this submission's execution ended in a force quit " +
	"before a successful final result (see `exit_code` and " +
	"`trace_has_success_result` above; when present, `failure.message` " +
	"records the halt reason and " +
	"`failure.last_tool_calls_most_recent_first` shows what the agent " +
	"was doing when it was halted). Treat this failure as first-order " +
	"evidence and pursue BOTH goals together when revising the design:\n" +
	"(1) Make the next run complete without a force quit, targeting " +
	"the specific stall pattern shown in `failure`: tighten each " +
	"subagent's 'Output to orchestrator' contract with explicit " +
	"completion and acceptance criteria so agents return a definitive " +
	"result instead of repeating equivalent tool calls; add " +
	"orchestrator progress checks with recovery/re-delegation hops " +
	"that redirect a stalled subagent to a narrower follow-up scope; " +
	"state in shared protocols how agents must detect and break " +
	"repeated tool-call patterns (e.g., after re-reading the same file " +
	"or re-running the same command without new information, change " +
	"strategy or report the blocker to the orchestrator).\n" +
	"(2) Still improve the agentic workflow (hops, contracts) and " +
	"agent design (roles, instructions) for deliverable quality as " +
	"instructed below.\n" +
	"Do not achieve (1) with numerical caps on agents, subagents, " +
	"hops, tool calls, turns, or duration, and do not collapse the " +
	"design toward single-agent execution; resolve stalls through " +
	"acceptance gates, explicit fallback instructions, and " +
	"re-delegation."

const recurrentNotice = "RECURRENT FAILURE: `prior_failures` above shows that " +
	"earlier harness version(s) of this task also ended in a " +
	"force quit. Countermeasures written into the current " +
	"design did not change execution behavior. Compare the " +
	"failure fingerprints across versions to diagnose why, and " +
	"revise the approach materially — restructure the workflow " +
	"so the stall pattern cannot arise (e.g., size " +
	"long-running operations to complete within a single tool " +
	"call, or require an explicit strategy change after any " +
	"repeated result) — rather than restating similar " +
	"anti-repetition rules."

const resolvedNotice = "RESOLVED FAILURE HISTORY: `prior_failures` above shows that " +
	"earlier harness version(s) of this task ended in a force " +
	"quit, while the current version completed successfully. " +
	"Compare the current design with the prior failure " +
	"fingerprints to identify which provisions plausibly fixed " +
	"the failure, and PRESERVE them in the revised design — do " +
	"not remove or weaken anti-stall protections that are now " +
	"working. Otherwise continue improving the agentic workflow " +
	"(hops, contracts) and agent design (roles, instructions) " +
	"for deliverable quality as instructed below."

package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/record"
)

// History compression after qwen-code's ChatCompressionService: before a
// model call whose conversation's last prompt reached Threshold of the
// context window, the older 70% of the history (by characters, cut at a
// safe point, see splitPoint) is summarized by a side query and replaced
// by the summary, an acknowledgement, and the kept 30%. The side query is
// recorded as its own thread (role auxiliary, purpose chat_compression);
// the agent's next call carries record.Compression, where the SFT thread
// builder starts a new segment.
const (
	DefaultCompressThreshold = 0.7  // COMPRESSION_TOKEN_THRESHOLD
	compressPreserve         = 0.3  // COMPRESSION_PRESERVE_THRESHOLD
	minCompressFraction      = 0.05 // MIN_COMPRESSION_FRACTION
	toolRoundRetain          = 2    // TOOL_ROUND_RETAIN_COUNT
	// compressPromptAllowance is what qwen-code subtracts from the side
	// query's prompt tokens for the instruction it adds (about 1000).
	compressPromptAllowance = 1000
)

// The fixed texts of the compressed history. The acknowledgement and the
// continuation bridge are qwen-code's, since the model trains on them.
const (
	CompressInstruction = "First, reason in your scratchpad. Then, generate the <state_snapshot>."
	CompressAck         = "Got it. Thanks for the additional context!"
	CompressBridge      = "Continue with the prior task using the context above."
)

// CompressPrompt is the side query's system prompt: qwen-code's method
// (a <state_snapshot> with the same five sections), in mass's words.
const CompressPrompt = `You are the component that condenses a long agent conversation into a state snapshot.

The conversation so far will be dropped and replaced by your snapshot; the agent will continue from the snapshot alone. Keep every fact, decision, path, command result and open question the agent still needs; leave out pleasantries and anything already superseded.

First think it through in a private scratchpad. Then write exactly one XML block:

<state_snapshot>
    <overall_goal>The user's top-level objective, in one sentence.</overall_goal>
    <key_knowledge>Facts, constraints, conventions and results learned so far, as bullet points.</key_knowledge>
    <file_system_state>Files and directories created, read, changed or deleted, with what matters about each.</file_system_state>
    <recent_actions>The last significant actions and their outcomes.</recent_actions>
    <current_plan>The remaining steps, each marked [DONE], [IN PROGRESS] or [TODO].</current_plan>
</state_snapshot>`

// Compression configures history compression; the zero value compresses at
// DefaultCompressThreshold of the client's context window.
type Compression struct {
	// ContextWindow in tokens; 0: the client's (model.Config.ContextWindow),
	// else model.DefaultContextWindow.
	ContextWindow int
	// Threshold as a fraction of the window; 0: DefaultCompressThreshold;
	// negative turns compression off.
	Threshold float64
}

// compressor is one agent run's compression state.
type compressor struct {
	lastPrompt int  // prompt tokens of the last model call
	failed     bool // a compression failed: no more automatic ones (qwen-code)
	done       int
	pending    *record.Compression // for the next model call's record
}

func (c Config) threshold() int {
	t := c.Compress.Threshold
	if t < 0 {
		return 0
	}
	if t == 0 {
		t = DefaultCompressThreshold
	}
	w := c.Compress.ContextWindow
	if w <= 0 {
		if cw, ok := c.Client.(interface{ ContextWindow() int }); ok {
			w = cw.ContextWindow()
		}
	}
	if w <= 0 {
		w = model.DefaultContextWindow
	}
	return int(t * float64(w))
}

// maybeCompress compresses res.Messages when the last prompt reached the
// threshold. A compression that cannot help (nothing to cut, an empty
// summary, a summary larger than what it replaces) leaves the history as
// it was and turns automatic compression off, as in qwen-code; only a
// recording failure or ctx's end is an error.
func (c Config) maybeCompress(ctx context.Context, st *compressor, res *Result) error {
	limit := c.threshold()
	if limit <= 0 || st.failed || st.lastPrompt < limit {
		return nil
	}
	msgs := res.Messages
	hist := msgs[1:] // the system prompt stays
	pending := len(hist)
	for pending > 0 && hist[pending-1].Role == openai.ChatMessageRoleTool {
		pending-- // the results the next call answers are not history yet
	}
	us := units(hist[:pending])
	split := splitPoint(us, 1-compressPreserve, toolRoundRetain)
	if split == 0 {
		st.failed = true
		return nil
	}
	cut := us[split-1].to
	total, part := 0, 0
	for i, u := range us {
		total += u.chars
		if i < split {
			part += u.chars
		}
	}
	if total > 0 && float64(part)/float64(total) < minCompressFraction {
		st.failed = true
		return nil
	}
	summary, seq, usage, err := c.summarize(ctx, st, hist[:cut], res)
	if err != nil {
		return err
	}
	after := st.lastPrompt - (usage.PromptTokens - compressPromptAllowance) + usage.CompletionTokens
	if strings.TrimSpace(summary) == "" || usage.PromptTokens <= 0 || after > st.lastPrompt {
		c.Log.Warn("history compression did not help; compression off for this agent", "agent", c.ID, "summary_seq", seq)
		st.failed = true
		return nil
	}
	next := []openai.ChatCompletionMessage{msgs[0],
		{Role: openai.ChatMessageRoleUser, Content: summary},
		{Role: openai.ChatMessageRoleAssistant, Content: CompressAck}}
	if cut < pending && hist[cut].Role == openai.ChatMessageRoleAssistant {
		next = append(next, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: CompressBridge})
	}
	next = append(next, hist[cut:]...)
	st.pending = &record.Compression{SummarySeq: seq, Compressed: cut, Kept: len(hist) - cut,
		TokensBefore: st.lastPrompt, Threshold: limit}
	st.done++
	res.Messages = next
	c.Log.Info("history compressed", "agent", c.ID, "tokens_before", st.lastPrompt, "compressed", cut, "kept", len(hist)-cut)
	return nil
}

// summarize runs and records the side query; its tokens count as the agent's.
func (c Config) summarize(ctx context.Context, st *compressor, old []openai.ChatCompletionMessage, res *Result) (string, int64, openai.Usage, error) {
	msgs := make([]openai.ChatCompletionMessage, 0, len(old)+2)
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: CompressPrompt})
	msgs = append(msgs, old...)
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: CompressInstruction})
	t0 := time.Now()
	resp, err := c.Client.Chat(ctx, model.Request{Messages: msgs, Seed: c.Seed})
	t1 := time.Now()
	rr := record.Record{TS: t0, TSEnd: t1, Agent: c.ID, Thread: fmt.Sprintf("%s/compress-%d", c.ID, st.done+1),
		Role: record.RoleAuxiliary, Parent: c.ID, Purpose: record.PurposeCompression,
		Request: record.Request{Model: c.Client.Model(), Messages: msgs, Sampling: c.sampling(), ExtraBody: c.Client.ExtraBody()},
		Status:  record.StatusOK, DurationMS: float64(t1.Sub(t0).Microseconds()) / 1000, Attempts: resp.Attempts}
	if err != nil {
		if ctx.Err() != nil {
			return "", 0, openai.Usage{}, ctx.Err()
		}
		// Best effort, as in qwen-code: a failed summary leaves the history whole.
		rr.Status, rr.Error = record.StatusError, err.Error()
		seq, rerr := c.Rec.Append(rr)
		if rerr != nil {
			return "", 0, openai.Usage{}, fmt.Errorf("record compression call: %w", rerr)
		}
		return "", seq, openai.Usage{}, nil
	}
	rr.Response = record.FromModel(resp)
	seq, err := c.Rec.Append(rr)
	if err != nil {
		return "", 0, openai.Usage{}, fmt.Errorf("record compression call: %w", err)
	}
	res.PromptTokens += int64(resp.Usage.PromptTokens)
	res.CompletionTokens += int64(resp.Usage.CompletionTokens)
	return resp.Message.Content, seq, resp.Usage, nil
}

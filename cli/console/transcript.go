package console

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mass-dev/mass/episodefmt"
)

// MaxTranscriptBytes caps how much of api_requests.jsonl a transcript reads.
const MaxTranscriptBytes = 256 << 20

// callRecord is the part of an api_requests.jsonl record a transcript shows.
type callRecord struct {
	Seq     int64   `json:"seq"`
	Agent   string  `json:"agent"`
	Thread  string  `json:"thread"`
	Role    string  `json:"role"`
	Parent  string  `json:"parent"`
	Status  string  `json:"status"`
	Error   string  `json:"error"`
	Millis  float64 `json:"duration_ms"`
	Request struct {
		Messages []message `json:"messages"`
	} `json:"request"`
	Response struct {
		Content   string     `json:"content"`
		Reasoning string     `json:"reasoning_content"`
		ToolCalls []toolCall `json:"tool_calls"`
		Finish    string     `json:"finish_reason"`
		Usage     struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Reasoning  string     `json:"reasoning_content"`
	ToolCalls  []toolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
	Name       string     `json:"name"`
}

type toolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Call is one model call of a thread as a transcript shows it: the
// messages the model had not seen in the thread's previous call, then what
// it answered.
type Call struct {
	callRecord
	New []message
}

// Thread is one agent's conversation; Depth nests sub-agents under the
// agent that started them.
type Thread struct {
	ID, Role, Parent string
	Depth            int
	Calls            []Call
	Prompt, Output   int64
}

// ReadTranscript groups the records of an api_requests.jsonl stream into
// threads, in the order they first called the model, each sub-agent right
// after its parent's earlier ones. A line that is not a record is an error
// naming its number.
func ReadTranscript(r io.Reader) ([]*Thread, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxTranscriptBytes), 1<<20)
	byID := map[string]*Thread{}
	var order []*Thread
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !(len(line) == 1 && line[0] == '\n') {
			var rec callRecord
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return order, fmt.Errorf("%s line %d: %w", episodefmt.RequestsFile, n, jerr)
			}
			id := rec.Thread
			if id == "" {
				id = rec.Agent
			}
			t := byID[id]
			if t == nil {
				t = &Thread{ID: id, Role: rec.Role, Parent: rec.Parent}
				byID[id] = t
				order = append(order, t)
			}
			seen := 0
			if len(t.Calls) > 0 {
				seen = len(t.Calls[len(t.Calls)-1].Request.Messages)
			}
			msgs := rec.Request.Messages
			if seen > len(msgs) {
				seen = 0 // the history was compressed: show it all again
			}
			t.Calls = append(t.Calls, Call{callRecord: rec, New: msgs[seen:]})
			t.Prompt += rec.Response.Usage.Prompt
			t.Output += rec.Response.Usage.Completion
		}
		if err == io.EOF {
			return nest(order), nil
		}
		if err != nil {
			return order, fmt.Errorf("read %s: %w", episodefmt.RequestsFile, err)
		}
	}
}

// nest orders threads depth-first: each after its parent, siblings in the
// order they started.
func nest(ts []*Thread) []*Thread {
	kids := map[string][]*Thread{}
	known := map[string]bool{}
	for _, t := range ts {
		known[t.ID] = true
	}
	var roots []*Thread
	for _, t := range ts {
		if known[t.Parent] && t.Parent != t.ID {
			kids[t.Parent] = append(kids[t.Parent], t)
		} else {
			roots = append(roots, t)
		}
	}
	out := make([]*Thread, 0, len(ts))
	done := map[*Thread]bool{}
	var walk func(t *Thread, depth int)
	walk = func(t *Thread, depth int) {
		if done[t] {
			return
		}
		done[t] = true
		t.Depth = depth
		out = append(out, t)
		for _, k := range kids[t.ID] {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	for _, t := range ts { // parent cycles: show them flat rather than lose them
		walk(t, 0)
	}
	return out
}

func (c *Console) transcript(ctx context.Context, r *http.Request) (view, error) {
	id := r.PathValue("id")
	rc, err := c.cl.EpisodeFile(ctx, id, episodefmt.RequestsFile)
	if err != nil {
		return view{}, err
	}
	defer rc.Close()
	ts, err := ReadTranscript(rc)
	if err != nil {
		return view{}, err
	}
	return view{name: "transcript", title: "transcript of " + id, data: map[string]any{"ID": id, "Threads": ts}}, nil
}

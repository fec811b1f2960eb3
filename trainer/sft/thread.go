package sft

import (
	"sort"
	"strings"

	"github.com/mass-dev/mass/trainer/chat"
)

// Segment is one conversation to render and window: the last request of a chain of calls
// that extend each other, plus its response.
type Segment struct {
	Thread, Role string
	IsMain       bool
	Index        int // per thread, in order
	Messages     []chat.Message
	Tools        []chat.Value
	// SupervisedFrom: only assistant turns at message index >= SupervisedFrom carry loss
	// (earlier ones were supervised in an earlier segment).
	SupervisedFrom int
}

// Stats counts what thread reconstruction dropped or changed.
type Stats struct {
	Calls           int `json:"calls"`
	ErrorCalls      int `json:"error_calls"`
	Retries         int `json:"retries"`
	LengthCut       int `json:"length_cut_responses"`
	TeacherReplaced int `json:"teacher_prompts_replaced"`
	TeacherMissing  int `json:"teacher_prompts_missing"`
}

// Segments rebuilds every thread of an episode and cuts it into segments. splitQueries
// starts a new segment at every real user query after the first (needed for Qwen3, whose
// template drops reasoning before the last query).
func Segments(ep *Episode, splitQueries bool, st *Stats) []Segment {
	byThread := map[string][]Call{}
	var order []string
	for _, c := range ep.Calls {
		st.Calls++
		if !c.OK {
			st.ErrorCalls++
			continue
		}
		if _, ok := byThread[c.Thread]; !ok {
			order = append(order, c.Thread)
		}
		byThread[c.Thread] = append(byThread[c.Thread], c)
	}
	var out []Segment
	for _, th := range order {
		calls := byThread[th]
		sort.SliceStable(calls, func(i, j int) bool { return calls[i].Seq < calls[j].Seq })
		role := threadRole(calls, &ep.Meta)
		idx := 0
		for _, chain := range chains(calls, st) {
			msgs, tools := conversation(chain, st)
			floor := 0
			if chain[0].Compressed || chain[0].Purpose == PurposeCompression {
				floor = len(chain[0].Messages)
			}
			switch {
			case role == RoleOrchestrator && floor == 0:
				substituteTeacher(msgs, &ep.Meta, st)
			case chain[0].Purpose == PurposeCompression && firstUserHas(msgs, ep.Meta.TeacherPrompt):
				// The orchestrator's summary side query read the teacher prompt: it sees
				// the bare task too.
				substituteTeacher(msgs, &ep.Meta, st)
			}
			for _, part := range splitSegment(msgs, splitQueries) {
				if part.from < floor {
					part.from = floor
				}
				if part.from >= len(part.msgs) {
					continue // nothing after the compressed history in this part
				}
				out = append(out, Segment{Thread: th, Role: role, IsMain: role == RoleOrchestrator, Index: idx,
					Messages: part.msgs, Tools: tools, SupervisedFrom: part.from})
				idx++
			}
		}
	}
	return out
}

func threadRole(calls []Call, meta *EpisodeMeta) string {
	for _, c := range calls {
		if c.Role != "" {
			return c.Role
		}
	}
	// Logs without roles: the orchestrator is the thread that received the teacher prompt.
	if meta.TeacherPrompt != "" {
		for _, m := range calls[0].Messages {
			if m.Role == "user" {
				if strings.Contains(m.Content, meta.TeacherPrompt) {
					return RoleOrchestrator
				}
				break
			}
		}
	}
	return RoleWorker
}

// chains groups a thread's calls: a call whose request extends the previous request
// continues the chain; a call repeating the previous request exactly is a retry and
// replaces it; a call after a history compression, and anything else, starts a new chain.
func chains(calls []Call, st *Stats) [][]Call {
	var out [][]Call
	for _, c := range calls {
		if n := len(out); n > 0 && !c.Compressed {
			cur := out[n-1]
			prev := cur[len(cur)-1]
			switch {
			case sameMessages(prev.Messages, c.Messages):
				st.Retries++
				cur[len(cur)-1] = c
				continue
			case len(c.Messages) > len(prev.Messages) && sameMessages(prev.Messages, c.Messages[:len(prev.Messages)]):
				out[n-1] = append(cur, c)
				continue
			}
		}
		out = append(out, []Call{c})
	}
	return out
}

func sameMessages(a, b []chat.Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(&b[i]) {
			return false
		}
	}
	return true
}

// conversation returns the chain's last request plus its response. Assistant turns that the
// chain's own calls produced are taken from the recorded responses (with their reasoning),
// since the history sent back may omit it. A final response cut by the length limit is
// dropped.
func conversation(chain []Call, st *Stats) ([]chat.Message, []chat.Value) {
	last := chain[len(chain)-1]
	msgs := append([]chat.Message(nil), last.Messages...)
	for _, c := range chain[:len(chain)-1] {
		k := len(c.Messages)
		if k < len(msgs) && msgs[k].Role == "assistant" && c.FinishReason != "length" &&
			len(msgs[k].ToolCalls) == len(c.Response.ToolCalls) {
			msgs[k] = c.Response
		}
	}
	if last.FinishReason == "length" {
		st.LengthCut++
	} else {
		msgs = append(msgs, last.Response)
	}
	return msgs, last.Tools
}

// substituteTeacher replaces the teacher prompt in the orchestrator's first user message by
// the bare task, so the model learns to organize the team without being told how.
func substituteTeacher(msgs []chat.Message, meta *EpisodeMeta, st *Stats) {
	if meta.TeacherPrompt == "" || meta.TeacherPrompt == meta.Prompt {
		return
	}
	for i := range msgs {
		if msgs[i].Role != "user" {
			continue
		}
		if strings.Contains(msgs[i].Content, meta.TeacherPrompt) {
			msgs[i].Content = strings.Replace(msgs[i].Content, meta.TeacherPrompt, meta.Prompt, 1)
			st.TeacherReplaced++
		} else {
			st.TeacherMissing++
		}
		return
	}
}

// PurposeCompression is the purpose of a recorded history-compression side query
// (agents/record.PurposeCompression).
const PurposeCompression = "chat_compression"

// firstUserHas reports whether the first user message contains s (s not empty).
func firstUserHas(msgs []chat.Message, s string) bool {
	for _, m := range msgs {
		if m.Role == "user" {
			return s != "" && strings.Contains(m.Content, s)
		}
	}
	return false
}

type segPart struct {
	msgs []chat.Message
	from int
}

// splitSegment cuts a conversation at each real user query after the first: part j holds
// the messages before query j+1 and supervises the assistant turns after query j.
func splitSegment(msgs []chat.Message, split bool) []segPart {
	if !split {
		return []segPart{{msgs: msgs}}
	}
	var queries []int
	for i, m := range msgs {
		if m.Role == "user" && chat.LastQueryIndex(msgs[:i+1]) == i {
			queries = append(queries, i)
		}
	}
	if len(queries) <= 1 {
		return []segPart{{msgs: msgs}}
	}
	var parts []segPart
	for j, q := range queries {
		end := len(msgs)
		if j+1 < len(queries) {
			end = queries[j+1]
		}
		from := q
		if j == 0 {
			from = 0
		}
		parts = append(parts, segPart{msgs: msgs[:end], from: from})
	}
	return parts
}

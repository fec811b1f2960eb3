package agent

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// unit is one entry of qwen-code's history (a Gemini Content): a user
// message, an assistant message, or the tool messages answering one
// assistant message (one "user" content of function responses).
type unit struct {
	from, to int  // message indexes [from, to)
	user     bool // user or tool results
	results  bool // tool results (functionResponse)
	calls    bool // assistant with tool calls (functionCall)
	chars    int  // JSON length, qwen-code's JSON.stringify(content).length
}

// units groups msgs into history entries.
func units(msgs []openai.ChatCompletionMessage) []unit {
	var out []unit
	for i := 0; i < len(msgs); {
		u := unit{from: i, to: i + 1}
		switch msgs[i].Role {
		case openai.ChatMessageRoleTool:
			u.user, u.results = true, true
			for u.to < len(msgs) && msgs[u.to].Role == openai.ChatMessageRoleTool {
				u.to++
			}
		case openai.ChatMessageRoleUser:
			u.user = true
		default:
			u.calls = len(msgs[i].ToolCalls) > 0
		}
		for _, m := range msgs[u.from:u.to] {
			b, _ := json.Marshal(m)
			u.chars += len(b)
		}
		out = append(out, u)
		i = u.to
	}
	return out
}

// splitPoint is qwen-code's findCompressSplitPoint: the index of the first
// unit to keep. A clean split is the first user prompt (not tool results)
// past fraction of the characters; failing that, a history ending in a
// plain answer or in tool results is compressed whole, and one ending in a
// tool call in flight keeps that call and the retain complete tool rounds
// before it.
func splitPoint(us []unit, fraction float64, retain int) int {
	total := 0
	for _, u := range us {
		total += u.chars
	}
	target := float64(total) * fraction
	last, cum := 0, 0
	for i, u := range us {
		if u.user && !u.results {
			if float64(cum) >= target {
				return i
			}
			last = i
		}
		cum += u.chars
	}
	if len(us) == 0 {
		return 0
	}
	end := us[len(us)-1]
	switch {
	case !end.user && !end.calls:
		return len(us)
	case !end.user:
		pairs, i := 0, len(us)-2
		for i >= 1 && pairs < retain && us[i-1].calls && us[i].results {
			pairs++
			i -= 2
		}
		return len(us) - (2*pairs + 1)
	case end.results:
		return len(us)
	}
	return last
}

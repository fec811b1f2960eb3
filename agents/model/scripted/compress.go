package scripted

import (
	"fmt"
	"strings"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

// compressMarker is what a history-compression request contains (the
// qwen-code compression prompt asks for a <state_snapshot>).
const compressMarker = "<state_snapshot>"

func isCompression(r *fakeopenai.Request) bool {
	for _, m := range r.Messages {
		if (m.Role == "system" || m.Role == "user") && strings.Contains(m.Content, compressMarker) {
			return true
		}
	}
	return false
}

// compress answers a history-compression request with a labelled snapshot
// that lists the tool calls made so far, so a compressed conversation can
// go on.
func compress(r *fakeopenai.Request) fakeopenai.Reply {
	var b strings.Builder
	b.WriteString(compressMarker + "\n<overall_goal>" + Label + " continue the scripted dry run</overall_goal>\n<recent_actions>\n")
	n := 0
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			n++
			fmt.Fprintf(&b, "- %s %s\n", c.Function.Name, truncate(c.Function.Arguments, 120))
		}
	}
	fmt.Fprintf(&b, "</recent_actions>\n<tool_calls>%d</tool_calls>\n</state_snapshot>", n)
	return fakeopenai.Reply{Reasoning: Label + " Compress the history.", Content: b.String()}
}

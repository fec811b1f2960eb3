package console

import (
	"fmt"
	"sort"
	"strings"
)

// counterNames are the human names of the counters the builtin kinds
// report; others are shown with underscores as spaces.
var counterNames = map[string]string{
	"agents":                      "agents",
	"running_agents":              "running",
	"turns":                       "turns",
	"tool_calls":                  "tool calls",
	"prompt_tokens":               "prompt tok",
	"completion_tokens":           "output tok",
	"processed_supervised_tokens": "trained tok",
	"tick":                        "tick",
}

// CounterLabel is the human name of a progress counter.
func CounterLabel(k string) string {
	if n, ok := counterNames[k]; ok {
		return n
	}
	return strings.ReplaceAll(k, "_", " ")
}

// Counters renders counters as "label value" pairs in a stable order;
// a pair X and Xs (step/steps, tick/ticks) is shown as "X a/b".
func Counters(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if _, isTotal := m[strings.TrimSuffix(k, "s")]; isTotal && strings.HasSuffix(k, "s") && k != "s" {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if total, ok := m[k+"s"]; ok {
			out = append(out, fmt.Sprintf("%s %d/%d", CounterLabel(k), m[k], total))
			continue
		}
		out = append(out, fmt.Sprintf("%s %d", CounterLabel(k), m[k]))
	}
	return out
}

package console

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
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

// ProgressText is a job's progress in one readable line: the stage, the
// message (a structured one, fields two spaces apart, joined with " · ")
// and the counters; a structured message carries its own numbers, so of
// the counters only the stage's place ("stage 2/8") is added to it.
func ProgressText(p *api.Progress) string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Stage != "" {
		parts = append(parts, p.Stage)
	}
	var fields []string
	for _, f := range strings.Split(p.Message, "  ") {
		if f = strings.TrimSpace(f); f != "" {
			fields = append(fields, f)
		}
	}
	parts = append(parts, fields...)
	counters := p.Counters
	if len(fields) > 2 {
		counters = map[string]int64{}
		for _, k := range []string{"stage", "stages"} {
			if v, ok := p.Counters[k]; ok {
				counters[k] = v
			}
		}
	}
	return strings.Join(append(parts, Counters(counters)...), " · ")
}

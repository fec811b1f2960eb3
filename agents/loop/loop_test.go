package loop

import (
	"fmt"
	"strings"
	"testing"
)

type turn struct {
	content string
	calls   [][2]string
}

func calls(n int, name, args string) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		out[i] = [2]string{name, args}
	}
	return out
}

func TestDetector(t *testing.T) {
	ls := [2]string{"run_shell_command", `{"command":"ls"}`}
	tests := []struct {
		name     string
		turns    []turn
		wantRule string // "" means no halt
		wantAt   int    // index of the turn that halts
	}{
		{"varied calls", []turn{
			{"", [][2]string{ls}}, {"", [][2]string{{"read_file", `{"file_path":"a"}`}}}, {"", [][2]string{ls}},
			{"", [][2]string{{"read_file", `{"file_path":"b"}`}}}, {"", [][2]string{ls}}, {"done", nil},
		}, "", 0},
		{"4 identical in a row is fine", []turn{
			{"", [][2]string{ls}}, {"", [][2]string{ls}}, {"", [][2]string{ls}}, {"", [][2]string{ls}}, {"ok", nil},
		}, "", 0},
		{"5 identical in a row", []turn{
			{"", [][2]string{ls}}, {"", [][2]string{ls}}, {"", [][2]string{ls}}, {"", [][2]string{ls}}, {"", [][2]string{ls}},
		}, RuleConsecutive, 4},
		{"same args differ in text are different", []turn{
			{"", [][2]string{ls}}, {"", [][2]string{ls}}, {"", [][2]string{{"run_shell_command", `{"command": "ls"}`}}},
			{"", [][2]string{ls}}, {"", [][2]string{ls}},
		}, "", 0},
		{"same call 6 times in one turn", []turn{
			{"", append(calls(3, "read_file", `{"file_path":"x"}`), append([][2]string{ls}, calls(3, "read_file", `{"file_path":"x"}`)...)...)},
		}, RuleSameInTurn, 0},
		{"per-turn cap", []turn{
			{"", func() [][2]string {
				var cs [][2]string
				for i := range DefaultCallsPerTurn + 1 {
					cs = append(cs, [2]string{"read_file", fmt.Sprintf(`{"file_path":"f%d"}`, i)})
				}
				return cs
			}()},
		}, RuleTurnCap, 0},
		{"chanting", []turn{
			{strings.Repeat("I will now check the file again to be sure. ", 3), nil},
			{strings.Repeat("I will now check the file again to be sure. ", 12), nil},
		}, RuleChanting, 1},
		{"long separator is not chanting", []turn{{strings.Repeat("=", 400), nil}}, "", 0},
		{"ordinary prose", []turn{{strings.Repeat("The quick brown fox jumps. ", 1) + "Then results were verified with pytest and the metrics written to /workspace/out.json.", nil}}, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Config{})
			for i, tr := range tt.turns {
				h := d.Turn(tr.content, tr.calls)
				if h != nil {
					if tt.wantRule == "" {
						t.Fatalf("turn %d halted (%v), want no halt", i, h)
					}
					if got, want := h.Rule, tt.wantRule; got != want {
						t.Fatalf("rule = %s, want %s", got, want)
					}
					if got, want := i, tt.wantAt; got != want {
						t.Fatalf("halted at turn %d, want %d", got, want)
					}
					return
				}
			}
			if tt.wantRule != "" {
				t.Fatalf("no halt, want %s", tt.wantRule)
			}
		})
	}
}

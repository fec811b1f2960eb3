package loop

import (
	"fmt"
	"strings"
	"testing"
)

type turn struct {
	reasoning, content string
	calls              [][2]string
}

func one(name, args string) turn { return turn{calls: [][2]string{{name, args}}} }

func sh(cmd string) turn { return one("run_shell_command", fmt.Sprintf(`{"command":%q}`, cmd)) }

func read(p string) turn { return one("read_file", fmt.Sprintf(`{"file_path":%q}`, p)) }

func edit(i int) turn {
	return one("edit", fmt.Sprintf(`{"file_path":"/workspace/a.py","old_string":"v%d","new_string":"v%d"}`, i, i+1))
}

func repeat(n int, t ...turn) []turn {
	var out []turn
	for range n {
		out = append(out, t...)
	}
	return out
}

func distinct(n int) []turn {
	var out []turn
	for i := range n {
		out = append(out, sh(fmt.Sprintf("echo %d", i)), read(fmt.Sprintf("f%d", i)))
	}
	return out[:n]
}

// verification is the normal cycle: edit, run the tests, read, edit again.
func verification(cycles int) []turn {
	var out []turn
	for i := range cycles {
		out = append(out, edit(i), sh("python -m pytest -q"), read("/workspace/a.py"), edit(1000+i))
	}
	return out
}

func TestDetector(t *testing.T) {
	ls := sh("ls")
	chant := strings.Repeat("I will now check the file again to be sure. ", 12)
	tests := []struct {
		name       string
		heuristics bool
		cfg        Config
		turns      []turn
		wantRule   string // "" means no halt
		wantAt     int    // index of the turn that halts
	}{
		{"4 identical in a row is fine", false, Config{}, repeat(4, ls), "", 0},
		{"5 identical in a row", false, Config{}, repeat(5, ls), RuleConsecutive, 4},
		{"spacing and key order do not make calls differ", false, Config{}, []turn{
			ls, ls, one("run_shell_command", `{ "command": "ls" }`), ls, ls}, RuleConsecutive, 4},
		{"7 git status in a row is fine", false, Config{}, append(repeat(3, sh("git status"), sh("git diff")), sh("git status --short")), "", 0},
		{"8 git overviews in a row", false, Config{}, repeat(4, sh("git status"), sh("git diff HEAD~1 && git ls-files")), RuleShellStagnation, 7},
		{"file diffs are not overviews", false, Config{}, repeat(4, sh("git status"), sh("git diff -- a.py")), "", 0},
		{"explicit cap is hard", false, Config{CallsPerTurn: 4}, distinct(5), RuleTurnCap, 4},
		{"soft cap lets varied calls pass", false, Config{}, distinct(300), "", 0},
		{"soft cap halts a stuck run", false, Config{}, append(repeat(6, ls, sh("pwd")), distinct(100)...), RuleTurnCap, 100},
		{"hard backstop", false, Config{CallsPerTurn: 0, HardMultiplier: 2}, distinct(201), RuleTurnCap, 200},
		{"6 scattered duplicates ignored without heuristics", false, Config{}, repeat(6, ls, sh("pwd"), read("x")), "", 0},
		{"6 scattered duplicates", true, Config{}, repeat(6, ls, edit(0), read("x"), edit(1)), RuleGlobalDuplicate, 20},
		{"alternating", true, Config{}, repeat(3, ls, read("x")), RuleAlternating, 5},
		{"cold start reads are exploration", true, Config{}, func() []turn {
			var r []turn
			for i := range 7 {
				r = append(r, read(fmt.Sprintf("f%d", i)), one("list_directory", fmt.Sprintf(`{"path":"d%d"}`, i)))
			}
			return r
		}(), "", 0},
		{"read-file loop", true, Config{}, append([]turn{sh("make")}, func() []turn {
			var r []turn
			for i := range 8 {
				r = append(r, read(fmt.Sprintf("f%d", i)), one("list_directory", fmt.Sprintf(`{"path":"d%d"}`, i)))
			}
			return r
		}()...), RuleReadFileLoop, 8},
		{"action stagnation", true, Config{}, func() []turn {
			var r []turn
			for i := range 8 {
				r = append(r, sh(fmt.Sprintf("echo %d", i)))
			}
			return r
		}(), RuleStagnation, 7},
		{"chanting", true, Config{}, []turn{{content: strings.Repeat("I will now check the file again to be sure. ", 3)}, {content: chant}}, RuleChanting, 1},
		{"chanting needs heuristics", false, Config{}, []turn{{content: chant}}, "", 0},
		{"a tool call resets chanting", true, Config{}, []turn{{content: strings.Repeat("I will now check the file again to be sure. ", 6), calls: [][2]string{{"read_file", `{"file_path":"a"}`}}},
			{content: strings.Repeat("I will now check the file again to be sure. ", 6)}}, "", 0},
		{"repeated list items are not chanting", true, Config{}, []turn{{content: strings.Repeat("- I will now check the file again to be sure.\n", 20)}}, "", 0},
		{"code is not chanting", true, Config{}, []turn{{content: "```\n" + chant + "\n```"}}, "", 0},
		{"repeated thoughts", true, Config{}, []turn{{reasoning: "**Checking**\nlook at a.py\n\n**Checking**\nLook at a.py\n\n**Checking**\nlook at a.py"}}, RuleThoughts, 0},
		{"thoughts that progress", true, Config{}, []turn{{reasoning: "**Checking**\nlook at a.py\n\n**Checking**\nlook at b.py\n\n**Checking**\nlook at a.py"}}, "", 0},
		{"verification cycles", false, Config{}, verification(24), "", 0},
		{"verification cycles with heuristics", true, Config{}, verification(5), "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Heuristics = tt.heuristics
			d := New(cfg)
			for i, tr := range tt.turns {
				h := d.Turn(tr.reasoning, tr.content, tr.calls)
				if h == nil {
					continue
				}
				if tt.wantRule == "" {
					t.Fatalf("turn %d halted (%v), want no halt", i, h)
				}
				if h.Rule != tt.wantRule || i != tt.wantAt {
					t.Fatalf("halt %s at turn %d (%s), want %s at %d", h.Rule, i, h.Detail, tt.wantRule, tt.wantAt)
				}
				return
			}
			if tt.wantRule != "" {
				t.Fatalf("no halt, want %s", tt.wantRule)
			}
		})
	}
}

// The whole run is one turn: calls spread over many messages count together.
func TestCountsSpanMessages(t *testing.T) {
	d := New(Config{Heuristics: true})
	ls := [2]string{"run_shell_command", `{"command":"ls"}`}
	msgs := [][][2]string{{ls, {"edit", `{"a":1}`}}, {{"read_file", `{"file_path":"x"}`}, ls}, {ls}, {{"edit", `{"a":2}`}, ls}, {{"glob", `{"pattern":"*"}`}, ls}, {ls}}
	var h *Halt
	for _, m := range msgs {
		if h = d.Turn("", "", m); h != nil {
			break
		}
	}
	if h == nil || h.Rule != RuleGlobalDuplicate {
		t.Fatalf("halt = %v, want %s", h, RuleGlobalDuplicate)
	}
}

func FuzzDetector(f *testing.F) {
	f.Add("**a**\nb", "text ```x", "run_shell_command", `{"command":"git status"}`)
	f.Add("", strings.Repeat("abc ", 300), "read_file", `{`)
	f.Fuzz(func(t *testing.T, reasoning, content, name, args string) {
		d := New(Config{Heuristics: true, ContentHistory: 200})
		for range 3 {
			if h := d.Turn(reasoning, content, [][2]string{{name, args}}); h != nil && h.Rule == "" {
				t.Fatal("halt without a rule")
			}
		}
	})
}

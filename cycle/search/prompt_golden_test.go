package search

import (
	"archive/tar"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

var update = flag.Bool("update", false, "rewrite the golden optimizer prompts in testdata/optimizer")

// designOf is a small strict design with one instruction per agent.
func designOf(instr ...string) workflow.Workflow {
	var w workflow.Workflow
	for i, s := range instr {
		w.Agents = append(w.Agents, workflow.Agent{AgentID: "agent_" + string(rune('a'+i)), Role: "Role " + string(rune('A'+i)), Instruction: s})
	}
	return w
}

func writeTar(t *testing.T, path string, files map[string]string) {
	t.Helper()
	if err := writeTarFile(path, files); err != nil {
		t.Fatal(err)
	}
}

func writeTarFile(path string, files map[string]string) error {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, name := range sortedKeys(files) {
		body := files[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
			return err
		}
		_, _ = tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// fixtureRunner is a search at step v2 -> v3: v0 lost to the baseline, v1
// beat it (the champion), v2 beat it too and lost the arbitration; v2's
// episode hit a loop and v0's failed as well.
func fixtureRunner(t *testing.T, o PromptOptions, rule string) (*runner, EpisodeResult) {
	t.Helper()
	dir := t.TempDir()
	vers := workflow.Versions{Dir: dir}
	for k, w := range []workflow.Workflow{
		designOf("Plan the study.", "Write the code."),
		designOf("Plan the study and name the deliverables.", "Write the code. Output to orchestrator: file list."),
		designOf("Plan the study and name the deliverables.", "Write the code. Output to orchestrator: file list.", "Check results/metrics.json against the report."),
	} {
		if err := vers.Put(k, w); err != nil {
			t.Fatal(err)
		}
	}
	export := filepath.Join(dir, "export.tar")
	writeTar(t, export, map[string]string{
		"report.md":                "# Report\nSharpe 0.8\n",
		"results/metrics.json":     `{"sharpe": 0.8, "ic": NaN}`,
		"results/raw_records.json": `[1,2,3]`,
		"results/a/b.json":         strings.Repeat("x", 50),
		"results/a.json":           `{"note": "café"}`,
	})
	one := func(i int) *int { return &i }
	hist := []Comparison{
		{Key: BaselineKey(0), Comparison: "no-harness-single-agent-baseline vs multi-agent-design-v0", VersionB: 0, Winner: WinA, Model: "judge-m", JudgedAt: "2026-01-01T00:00:00Z",
			Rationale: "A is better. B is missing results/model_comparison.json.  The report is inconsistent with metrics.json!"},
		{Key: BaselineKey(1), Comparison: "no-harness-single-agent-baseline vs multi-agent-design-v1", VersionB: 1, Winner: WinB, Model: "judge-m", JudgedAt: "2026-01-01T01:00:00Z",
			Rationale: "B delivers every file. Validation is weak in A."},
		{Key: BaselineKey(2), Comparison: "no-harness-single-agent-baseline vs multi-agent-design-v2", VersionB: 2, Winner: WinB, Model: "judge-m", JudgedAt: "2026-01-01T02:00:00Z",
			Rationale: "B has a NaN in metrics.json but otherwise passes."},
	}
	arbs := []Comparison{{Key: ArbitrationKey(1, 2), Comparison: "multi-agent-design-v1 vs multi-agent-design-v2", VersionA: one(1), VersionB: 2, Winner: WinA,
		Rationale: "A's report matches its metrics; B's does not"}}
	if rule == RuleAdjacent {
		hist = []Comparison{
			{Key: AdjacentKey(1), Comparison: "multi-agent-design-v0 vs multi-agent-design-v1", VersionA: one(0), VersionB: 1, Winner: WinB, Rationale: "B adds the missing file."},
			{Key: AdjacentKey(2), Comparison: "multi-agent-design-v1 vs multi-agent-design-v2", VersionA: one(1), VersionB: 2, Winner: WinA, Rationale: "A is more reproducible; B lacks pinned requirements."},
		}
		arbs = nil
	}
	sl := &slots{path: filepath.Join(dir, EpisodesFile), m: map[string]*Slot{
		"v0": {Name: "v0", Result: &EpisodeResult{Exit: "failed", Failure: "timeout", FailureMessage: "episode wall time reached"}},
		"v1": {Name: "v1", Result: &EpisodeResult{Exit: "completed", Success: true}},
	}}
	cfg := Config{TaskID: "query51", ReferenceID: "51", Rule: rule, Opts: o,
		Task: judge.Task{Prompt: "Build a macro signal.\\n\\nDeliverables:\\n1) report.md\n\nUse uv for all Python workflows."}}
	r := &runner{cfg: cfg, slots: sl, vers: vers, history: hist, arbitrations: arbs}
	cur := EpisodeResult{Exit: "failed", Failure: "loop", LoopHalt: true, FailureMessage: "loop detected: the same call 8 times", Export: export,
		LastToolCalls: []ToolCall{{Tool: "read_file", Args: `{"path":"/workspace/a.py"}`}, {Tool: "run_shell_command", Args: `{"command":"uv run main.py"}`}}}
	return r, cur
}

func TestOptimizerPromptGolden(t *testing.T) {
	mod := func(f func(*PromptOptions)) PromptOptions { o := DefaultPromptOptions(); f(&o); return o }
	cases := []struct {
		name    string
		opts    PromptOptions
		rule    string
		current int
	}{
		{"defaults", DefaultPromptOptions(), RuleReference, 2},
		{"no_best_design", mod(func(o *PromptOptions) { o.IncludeBestDesign = false }), RuleReference, 2},
		{"no_history_diffs", mod(func(o *PromptOptions) { o.HistoryDesignDiffs = false }), RuleReference, 2},
		{"no_v0_design", mod(func(o *PromptOptions) { o.IncludeV0Design = false }), RuleReference, 2},
		{"omit_results_json", mod(func(o *PromptOptions) { o.OmitFullResultsJSON = true }), RuleReference, 2},
		{"results_json_caps", mod(func(o *PromptOptions) { o.ResultsJSONMaxChars = 20; o.ResultsJSONTotalMaxChars = 80 }), RuleReference, 2},
		{"results_json_no_caps", mod(func(o *PromptOptions) { o.ResultsJSONMaxChars = 0; o.ResultsJSONTotalMaxChars = 0 }), RuleReference, 2},
		{"forbid_fixed_agent_limits", mod(func(o *PromptOptions) { o.ForbidFixedAgentLimits = true }), RuleReference, 2},
		{"max_design_chars", mod(func(o *PromptOptions) { o.MaxDesignChars = 12000 }), RuleReference, 2},
		{"target_design_chars", mod(func(o *PromptOptions) { o.MaxDesignChars = 12000; o.TargetDesignChars = 8000 }), RuleReference, 2},
		{"design_text", mod(func(o *PromptOptions) { o.OutputMode = OutputDesignText }), RuleReference, 2},
		{"adjacent", DefaultPromptOptions(), RuleAdjacent, 2},
		{"step0", DefaultPromptOptions(), RuleReference, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, cur := fixtureRunner(t, c.opts, c.rule)
			if c.current == 0 {
				r.history, r.arbitrations = nil, nil
				cur = EpisodeResult{Exit: "completed", Success: true, Export: cur.Export}
			}
			in, err := r.optimizerInput(c.current, cur)
			if err != nil {
				t.Fatal(err)
			}
			p, err := BuildOptimizerPrompt(in)
			if err != nil {
				t.Fatal(err)
			}
			got := referenceDump(p)
			path := filepath.Join("testdata", "optimizer", c.name+".txt")
			if *update {
				_ = os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Fatalf("prompt differs from %s (run with -update after checking it):\n%s", path, firstDiff(got, string(want)))
			}
		})
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + al[i] + "\nwant: " + bl[i]
		}
	}
	return "lengths differ"
}

// What each toggle adds or removes, on top of the golden files.
func TestOptimizerPromptToggles(t *testing.T) {
	build := func(f func(*PromptOptions)) string {
		o := DefaultPromptOptions()
		f(&o)
		r, cur := fixtureRunner(t, o, RuleReference)
		in, err := r.optimizerInput(2, cur)
		if err != nil {
			t.Fatal(err)
		}
		p, err := BuildOptimizerPrompt(in)
		if err != nil {
			t.Fatal(err)
		}
		return p.System + "\n" + p.User
	}
	def := build(func(*PromptOptions) {})
	for _, want := range []string{"# Previous best multi agent design (v1)", "NOTE: both this earlier design v1 and the current design v2 beat the no-harness baseline",
		"Record vs no_harness: v0 L · v1 W★ · v2 W", "★ = best design so far", "# Original multi agent design (v0 - the initial starting point)",
		"Design change behind this verdict", "# Full JSON artifacts under results/", "FAILURE NOTICE:", "RECURRENT FAILURE:",
		"Actionable takeaways for next version:", "- [", "# Save rules", "Return valid JSON only.", "\"subtype\": \"loop\"",
		"# Workspace for current iteration (multi-agent-design-v2)"} {
		if !strings.Contains(def, want) {
			t.Errorf("defaults lack %q", want)
		}
	}
	// pathlib orders part by part: results/a/b.json before results/a.json.
	if app := def[strings.Index(def, "# Full JSON artifacts"):]; strings.Contains(app, "raw_records.json") || strings.Index(app, "`results/a.json`") < strings.Index(app, "`results/a/b.json`") {
		t.Error("results appendix: excluded file shown or not in pathlib order")
	}
	checks := []struct {
		name      string
		f         func(*PromptOptions)
		gone, new []string
	}{
		{"include_best_design", func(o *PromptOptions) { o.IncludeBestDesign = false }, []string{"# Previous best", "★"}, []string{"Record vs no_harness: v0 L · v1 W · v2 W"}},
		{"history_design_diffs", func(o *PromptOptions) { o.HistoryDesignDiffs = false }, []string{"Design change behind this verdict"}, nil},
		{"include_v0_design", func(o *PromptOptions) { o.IncludeV0Design = false }, []string{"# Original multi agent design"}, nil},
		{"omit_full_results_json", func(o *PromptOptions) { o.OmitFullResultsJSON = true }, []string{"# Full JSON artifacts under results/"}, nil},
		{"results_json caps", func(o *PromptOptions) { o.ResultsJSONMaxChars, o.ResultsJSONTotalMaxChars = 20, 80 }, nil,
			[]string{"... [truncated: middle omitted] ...", "[truncated]", "- Omitted due to appendix character budget:"}},
		{"forbid_fixed_agent_limits", func(o *PromptOptions) { o.ForbidFixedAgentLimits = true }, nil,
			[]string{"Do not introduce arbitrary numerical caps", "Do not impose a fixed maximum number of recalls"}},
		{"max_design_chars", func(o *PromptOptions) { o.MaxDesignChars = 12000 }, nil,
			[]string{"keep improved_multi_agent_design under 12,000 characters", "Keep the replacement design under 12,000 characters."}},
		{"target_design_chars", func(o *PromptOptions) { o.MaxDesignChars, o.TargetDesignChars = 12000, 8000 }, nil,
			[]string{"no more than 8,000 characters and never exceed 12,000", "Target at most 8,000 characters"}},
		{"improvement_output_mode", func(o *PromptOptions) { o.OutputMode = OutputDesignText }, []string{"Return valid JSON only.", "Output schema:"},
			[]string{"Return only the full replacement multi-agent design block as plain text.", "Output contract: return only"}},
	}
	for _, c := range checks {
		got := build(c.f)
		for _, s := range c.gone {
			if strings.Contains(got, s) {
				t.Errorf("%s: still has %q", c.name, s)
			}
		}
		for _, s := range c.new {
			if !strings.Contains(got, s) || strings.Contains(def, s) {
				t.Errorf("%s: %q not added", c.name, s)
			}
		}
	}
	if err := (PromptOptions{OutputMode: OutputJSON, TargetDesignChars: 10}).Validate(); err == nil {
		t.Error("a target without a maximum validated")
	}
}

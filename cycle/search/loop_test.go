package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/workflow"
)

// fakeEpisodes "runs" an episode by writing a workspace export: the
// reference gets refFiles, every version verFiles. It records each
// request (the prompt the orchestrator would get).
type fakeEpisodes struct {
	dir                string
	refFiles, verFiles map[string]string
	fail               map[string]bool // slots whose episode ends in a loop halt
	mu                 sync.Mutex
	reqs               map[string]EpisodeRequest
}

func (f *fakeEpisodes) Run(_ context.Context, req EpisodeRequest) (EpisodeResult, error) {
	f.mu.Lock()
	if f.reqs == nil {
		f.reqs = map[string]EpisodeRequest{}
	}
	f.reqs[req.Slot] = req
	f.mu.Unlock()
	files := f.verFiles
	if req.Slot == "reference" {
		files = f.refFiles
	}
	export := filepath.Join(f.dir, req.ID+".tar")
	if err := writeTarFile(export, files); err != nil {
		return EpisodeResult{}, err
	}
	res := EpisodeResult{EpisodeID: req.ID, Dir: filepath.Join(f.dir, req.ID), Export: export, Exit: "completed", Success: true,
		TeacherPrompt: req.Prompt}
	if f.fail[req.Slot] {
		res.Exit, res.Success, res.Failure, res.LoopHalt, res.FailureMessage = "failed", false, "loop", true, "loop detected"
		res.LastToolCalls = []ToolCall{{Tool: "run_shell_command", Args: `{"command":"ls"}`}}
	}
	return res, nil
}

func (f *fakeEpisodes) Close(context.Context, string) error { return nil }

// roleServer is the OpenAI wire: the scripted evaluator for verdicts, and
// optimize for optimizer prompts (nil: the scripted optimizer).
func roleServer(t *testing.T, optimize func(system, user string) string) (judge.Model, *fakeopenai.Server) {
	t.Helper()
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		sys := ""
		if len(r.Messages) > 0 && r.Messages[0].Role == "system" {
			sys = r.Messages[0].Content
		}
		if optimize != nil && strings.HasPrefix(sys, OptimizerMarker) {
			return fakeopenai.Reply{Content: optimize(sys, r.FirstUser())}
		}
		return scripted.Policy(r)
	})
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := model.New(model.Config{Name: "m", BaseURL: srv.URL(), Model: "fake", MaxConcurrency: 2, Backoff: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return judge.Clients(func(string) (model.Client, error) { return c, nil }), srv
}

func loopConfig(t *testing.T, eps Episodes, m judge.Model, iterations int) Config {
	root := t.TempDir()
	zero := 0
	return Config{SearchID: "s1", TaskID: "query7", Dir: filepath.Join(root, "query7", "s1"), TaskDir: filepath.Join(root, "query7"),
		Task: judge.Task{ID: "query7", Prompt: "Forecast demand.", Required: []string{"report.md"}}, V0: workflow.Generic(),
		Model: "m", Iterations: iterations, Seed: 3, JudgeRetries: &zero, Episodes: eps, Models: m}
}

func readRetained(t *testing.T, dir string) Retained {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, RetainedFile))
	if err != nil {
		t.Fatal(err)
	}
	var r Retained
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A search where the bare baseline always delivers more: no version
// beats it, so the crown stays with v0 unproven — version null,
// beats_reference false — and replaying the records says the same.
func TestSearchNoVersionBeatsBaseline(t *testing.T) {
	eps := &fakeEpisodes{dir: t.TempDir(), refFiles: map[string]string{"report.md": "# report", "results/metrics.json": `{"mae":1}`},
		verFiles: map[string]string{"notes.txt": "draft"}}
	m, _ := roleServer(t, nil)
	cfg := loopConfig(t, eps, m, 2)
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ret := readRetained(t, cfg.Dir)
	if ret.Version != nil || ret.BeatsReference || sum.RetainedVersion != nil || sum.BeatsReference {
		t.Fatalf("retained %+v, summary %+v", ret, sum)
	}
	rep, err := Replay(cfg.Dir, "")
	if err != nil || rep.RetainedVersion != nil || rep.BeatsReference {
		t.Fatalf("replay %+v %v", rep, err)
	}
	// The reference's rule makes one comparison per version here (no arbitration).
	if got := sum.Calls.JudgmentsPerIteration; fmt.Sprint(got) != "[1 1 1]" {
		t.Fatalf("judgments per iteration %v", got)
	}
}

// A scripted search whose versions deliver: its own records, replayed,
// give the retained workflow it wrote.
func TestSearchRecordsReplayToRetained(t *testing.T) {
	eps := &fakeEpisodes{dir: t.TempDir(), refFiles: map[string]string{"notes.txt": "draft"},
		verFiles: map[string]string{"report.md": "# report\nCheck: total: pass\n", "results/metrics.json": `{"mae":1}`}}
	m, _ := roleServer(t, nil)
	cfg := loopConfig(t, eps, m, 3)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	ret := readRetained(t, cfg.Dir)
	rep, err := Replay(cfg.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if ret.Version == nil || rep.RetainedVersion == nil || *rep.RetainedVersion != *ret.Version || rep.BeatsReference != ret.BeatsReference || !ret.BeatsReference {
		t.Fatalf("retained %+v, replay %+v", ret, rep)
	}
}

// A task with a query template: v0 runs the template file itself, every
// later version its design rendered into the template byte for byte; a
// free-text design (extra keys, prose after the array, the copied
// post-design tail) is kept as the reference keeps it and still runs.
// The optimizer's prompt has the reference's sections.
func TestSearchTemplateAndFreeTextDesigns(t *testing.T) {
	raw, err := os.ReadFile("testdata/template/query7_ourTeam.txt")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ParseQueryTemplate(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	free := workflow.Header + "\n" + `[{"agent_id":"lead","role":"Lead","instruction":"Plan, then recall the modeler on a failed check.","output_to_orchestrator":"a table of checks"}]` +
		"\n\nThe lead re-delegates until every acceptance check passes."
	var prompts []string
	var mu sync.Mutex
	m, _ := roleServer(t, func(system, user string) string {
		mu.Lock()
		prompts = append(prompts, user)
		mu.Unlock()
		b, _ := json.Marshal(map[string]any{"improved_multi_agent_design": free + "\n\n" + strings.TrimLeft(tmpl.After, " \n")})
		return string(b)
	})
	eps := &fakeEpisodes{dir: t.TempDir(), refFiles: map[string]string{"notes.txt": "draft"},
		verFiles: map[string]string{"report.md": "# report", "results/metrics.json": `{"mae": 1.5}`}, fail: map[string]bool{"v1": true}}
	cfg := loopConfig(t, eps, m, 2)
	v0, err := workflow.ParseDesign(tmpl.Design)
	if err != nil {
		t.Fatal(err)
	}
	v0.Text = tmpl.Design
	cfg.V0, cfg.Template, cfg.ReferenceID = v0, &tmpl, "7"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if got := eps.reqs["v0"].Prompt; got != string(raw) {
		t.Fatalf("v0 did not run the template file itself:\n%q", got)
	}
	want := tmpl.Before + free + "\n\n" + strings.TrimLeft(tmpl.After, " \n")
	for _, slot := range []string{"v1", "v2"} {
		if got := eps.reqs[slot].Prompt; got != want {
			t.Fatalf("%s prompt:\n got %q\nwant %q", slot, got, want)
		}
		if strings.Contains(eps.reqs[slot].Prompt, "Execution requirements") {
			t.Fatalf("%s: a search episode carries an execution directive", slot)
		}
	}
	q, err := os.ReadFile(filepath.Join(cfg.Dir, "updated_queries", "query7_ourTeam-v1.txt"))
	if err != nil || string(q) != want {
		t.Fatalf("updated query v1: %v", err)
	}
	d, err := os.ReadFile(workflow.Versions{Dir: cfg.Dir}.Path(1))
	if err != nil || string(d) != free+"\n" {
		t.Fatalf("design v1 not stored as written: %q %v", d, err)
	}
	if len(prompts) != 2 {
		t.Fatalf("%d optimizer prompts", len(prompts))
	}
	for _, want := range []string{"# Task\n\nForecast next-week demand for a small bakery from its sales log and report the error.\n\nDeliverables:\n1)",
		"# Full JSON artifacts under results/\n### File: `results/metrics.json`", "# Save rules"} {
		if !strings.Contains(prompts[0], want) {
			t.Errorf("step 0 prompt lacks %q", want)
		}
	}
	for _, want := range []string{"FAILURE NOTICE:", "Record vs no_harness: v0 W", "\"subtype\": \"loop\""} {
		if !strings.Contains(prompts[1], want) {
			t.Errorf("step 1 prompt lacks %q", want)
		}
	}
	// v0 appears once: as the previous best (it holds the crown) or as the root.
	if strings.Contains(prompts[1], "# Previous best multi agent design (v0)") == strings.Contains(prompts[1], "# Original multi agent design (v0") {
		t.Error("step 1 prompt: v0 shown twice or not at all")
	}
}

// improvement_output_mode design-text: the reply is the design alone; an
// unusable one is sent back asking for the design text, not JSON.
func TestSearchDesignTextMode(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	m, srv := roleServer(t, func(system, user string) string {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return "Here is my plan: add a checker."
		}
		return "\n" + workflow.Header + "\n" + `[{"agent_id":"checker","role":"Checker","instruction":"Verify report.md."}]` + "\n"
	})
	eps := &fakeEpisodes{dir: t.TempDir(), refFiles: map[string]string{"notes.txt": "x"}, verFiles: map[string]string{"report.md": "# r"}}
	cfg := loopConfig(t, eps, m, 1)
	cfg.Opts = DefaultPromptOptions()
	cfg.Opts.OutputMode = OutputDesignText
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	d, err := os.ReadFile(workflow.Versions{Dir: cfg.Dir}.Path(1))
	if err != nil || !strings.Contains(string(d), `"agent_id":"checker"`) {
		t.Fatalf("design v1 %q %v", d, err)
	}
	var res OptimizerResult
	b, _ := os.ReadFile(filepath.Join(cfg.Dir, PromptsDir, "v0_to_v1", "result.json"))
	if err := json.Unmarshal(b, &res); err != nil || res.OutputMode != OutputDesignText || res.Proposal == nil || res.Proposal.MetadataNote == "" || res.Attempts != 2 {
		t.Fatalf("result %s %v", b, err)
	}
	retried := false
	for _, r := range srv.Requests() {
		if n := len(r.Messages); n > 2 && strings.HasSuffix(r.Messages[n-1].Content, "Answer again with the design block only, as plain text.") {
			retried = true
		}
	}
	if !retried {
		t.Fatal("the retry did not ask for the design text")
	}
}

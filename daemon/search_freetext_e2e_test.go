package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/cycle/workflow"
)

// freeDesign is what the reference's strict-JSON-free optimizer may write:
// an extra agent key and prose after the array.
const freeDesign = workflow.Header + "\n" + `[{"agent_id": "agent_lead", "role": "Lead", "instruction": "Compute the summary and write the report; recall yourself on a failed check.", "output_to_orchestrator": "a table of the checks"}]` +
	"\n\nThe lead re-delegates until every acceptance check passes."

// TestSearchFreeTextDesignRuns: a task with the reference's query
// template; the optimizer answers a free-text design with the copied
// post-design tail. The design is kept as the reference keeps it, its
// episode runs in a real sandbox with the template's text around it
// (updated_queries and episode.json agree, no execution directive), and
// the search finishes.
func TestSearchFreeTextDesignRuns(t *testing.T) {
	src, err := os.ReadFile("../examples/tasks/sales-analysis/task.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS("../examples/tasks/sales-analysis/data")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "grader"), os.DirFS("../examples/tasks/sales-analysis/grader")); err != nil {
		t.Fatal(err)
	}
	// Longer than the 200 characters the normaliser probes for, as the
	// reference's post-design texts are (a shorter one ending in white
	// space is not found in a trimmed design, there as here).
	after := search.EndMarker + "—run code with uv run, add packages with uv add, use uvx for tools. Write your history log: " +
		"your plan, the execution and your reflection, in a logs.txt file.\nIn logs.txt, Document all created and spawned agents, " +
		"the workflow between them and which of them ran. "
	tmpl := "Summarise /workspace/data/sales.csv into summary.json and report.md.\\n\\nDeliverables: summary.json, report.md.\n\n" +
		workflow.Header + " \n" + `[{"agent_id": "agent_analyst", "role": "Analyst", "instruction": "Compute the summary."}]` + "\n\n" + after
	spec := strings.Replace(string(src), "split: train", "split: train\nquery_template: query.txt\nreference_id: \"9\"", 1)
	for name, body := range map[string]string{"task.yaml": spec, "query.txt": tmpl} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := fakeopenai.New(func(r *fakeopenai.Request) fakeopenai.Reply {
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, search.OptimizerMarker) {
			b, _ := json.Marshal(map[string]string{"improved_multi_agent_design": freeDesign + "\n\n" + after})
			return fakeopenai.Reply{Content: string(b)}
		}
		return scripted.Policy(r)
	})
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := newSearchRig(t, map[string]string{"freetext": srv.URL()})
	out, err := r.massctl("search", "--task", filepath.Join(dir, "task.yaml"), "--iterations", "1", "--model", "scripted",
		"--optimizer-model", "freetext", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var sum search.Summary
	if err := json.Unmarshal(out, &sum); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	d, err := os.ReadFile(filepath.Join(sum.Dir, "versions", workflow.VersionFile(1)))
	if err != nil || string(d) != freeDesign+"\n" {
		t.Fatalf("design v1 %q %v", d, err)
	}
	before, _, _ := strings.Cut(tmpl, workflow.Header)
	want := before + freeDesign + "\n\n" + after
	q, err := os.ReadFile(filepath.Join(sum.Dir, "updated_queries", "query9_ourTeam-v1.txt"))
	if err != nil || string(q) != want {
		t.Fatalf("updated query v1:\n%q\nwant\n%q (%v)", q, want, err)
	}
	q0, err := os.ReadFile(filepath.Join(sum.Dir, "updated_queries", "query9_ourTeam-v0.txt"))
	if err != nil || string(q0) != tmpl {
		t.Fatalf("v0 did not run the template file itself: %q %v", q0, err)
	}
	slots := readJSON[[]search.Slot](t, filepath.Join(sum.Dir, search.EpisodesFile))
	for _, sl := range slots {
		if sl.Name != "v1" || sl.Result == nil {
			continue
		}
		info := readJSON[map[string]any](t, filepath.Join(r.data, "episodes", sl.Result.EpisodeID, "episode.json"))
		if info["teacher_prompt"] != want || strings.Contains(want, "Execution requirements") {
			t.Fatalf("v1's episode got another prompt: %v", info["teacher_prompt"])
		}
		if sl.Result.Exit == "" {
			t.Fatalf("v1's episode did not run: %+v", sl.Result)
		}
		return
	}
	t.Fatalf("no finished v1 episode in %+v (%s)", slots, time.Now())
}

package scripted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

func chat(t *testing.T, name, user string, seed int) string {
	t.Helper()
	s, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := model.New(s.ConfigFor(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), model.Request{Seed: &seed,
		Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "s"}, {Role: "user", Content: user}}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Message.Content
}

func TestEvaluatorDecidesFromEvidence(t *testing.T) {
	a := "### Deliverables preflight\n- [x] summary.json: summary.json\n- [ ] report.md: missing\n"
	b := "### Deliverables preflight\n- [x] summary.json: summary.json\n- [x] report.md: report.md\nCheck: v: pass\n"
	for _, swap := range []bool{false, true} {
		x, y, want := a, b, "B"
		if swap {
			x, y, want = b, a, "A"
		}
		out := chat(t, Name, EvaluatorMarker+"\n## Workspace A\n"+x+"## Workspace B\n"+y+"## Rubric\n", 1)
		var v struct{ Winner, Rationale string }
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.Winner != want || !strings.Contains(v.Rationale, "missing report.md") || !strings.HasPrefix(v.Rationale, Label) {
			t.Fatalf("swap %v: %s %v", swap, out, err)
		}
	}
}

func TestOptimizerRespondsToRationale(t *testing.T) {
	champ := workflowHeader + "\n" + `[{"agent_id":"planner","role":"P","instruction":"plan"}]`
	p := OptimizerMarker + "\n\n# Current multi agent design (v1)\n\n" + champ + "\n\n# Save rules\n\n" +
		"3. Pairwise history vs the no-harness baseline\n\n- Comparison: x\n  - Rationale (verbatim excerpt): A: 1 deliverables present, missing report.md. B: ok.\n\n3b. Pairwise history delta checklist\n"
	out := chat(t, Name, p, 1)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"improved_multi_agent_design", "changes_from_previous", "why_it_should_improve", "evidence_used", "expected_impact", "verification_checks"} {
		if m[k] == nil {
			t.Fatalf("no %s in %s", k, out)
		}
	}
	d := m["improved_multi_agent_design"].(string)
	agents := workflowAgents(d)
	if len(agents) != 2 || !strings.Contains(agents[1].Instruction, "report.md") {
		t.Fatalf("design did not add an owner for report.md: %s", d)
	}
}

func TestQualityOffset(t *testing.T) {
	if Quality(ModelID) != 0 || Quality(ModelID+"-gen-1") != 1 {
		t.Fatal("quality offset")
	}
	if !IsScripted(Gen1Name) || IsScripted("qwen") {
		t.Fatal("IsScripted")
	}
}

func TestRecipesShipForEveryExample(t *testing.T) {
	for _, id := range []string{"sales-analysis", "ml-classifier", "projectile-sim"} {
		rc := recipeByID(id)
		if rc == nil {
			t.Fatalf("no recipe for %s", id)
		}
		if _, ok := rc.Files[rc.FailSkip]; !ok || rc.Verify == "" || rc.Match == "" {
			t.Errorf("%s recipe: fail_skip %q is not a deliverable, or no verify/match", id, rc.FailSkip)
		}
	}
}

func TestFailingSeedSkipsGradedDeliverable(t *testing.T) {
	a := assignment{agent: "planner", recipe: "projectile-sim", index: 1, of: 3}
	names := func(seed int) string {
		r := &fakeopenai.Request{Model: ModelID, Seed: &seed}
		var out []string
		for _, c := range workerWrites(r, a, nil) {
			var args struct {
				FilePath string `json:"file_path"`
			}
			json.Unmarshal([]byte(c.Arguments), &args)
			out = append(out, args.FilePath)
		}
		return strings.Join(out, "|")
	}
	if strings.Contains(names(FailEvery-1), "answer.json") || !strings.Contains(names(0), "answer.json") {
		t.Fatal("the failing seed must leave out answer.json and only it")
	}
}

func TestAnswersHistoryCompression(t *testing.T) {
	out := chat(t, Name, "Summarize the conversation so far into a <state_snapshot> as instructed.", 1)
	if !strings.HasPrefix(out, "<state_snapshot>") || !strings.Contains(out, Label) || !strings.HasSuffix(out, "</state_snapshot>") {
		t.Fatalf("compression reply %q", out)
	}
}

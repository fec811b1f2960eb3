package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/daemontest"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// buildTools builds the sandbox helper and mass-train for an in-process
// massd that runs real episodes and a real LoRA run.
func buildTools(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, pkg := range []string{"./sandbox/helper/cmd/mass-sandbox-helper", "./cmd/mass-train"} {
		cmd := exec.Command("go", "build", "-o", bin+"/", pkg)
		cmd.Dir = ".."
		if strings.Contains(pkg, "helper") {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // mounted into containers: static
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	return bin
}

// TestConsoleRealCycle runs a real workflow search and a small generation
// on the scripted model (real sandboxes on the agent image, real
// judgments, a real two-step LoRA run on the tiny model) and loads every
// page kind of the console over that massd in headless Chromium: no
// console message, no element a model wrote, and each page shows what it
// is for.
func TestConsoleRealCycle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real sandboxes and a training run")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if eng, skip, err := sandboxtest.Engine(ctx, "the console's real-cycle test"); err != nil {
		t.Fatal(err)
	} else if eng == nil {
		t.Skip(skip)
	} else if _, err := eng.ImageInspect(ctx, image.AgentRef); err != nil {
		t.Skipf("AGENT IMAGE %s MISSING (massctl image build --all): the console's real-cycle test is SKIPPED: %v", image.AgentRef, err)
	}
	bin := buildTools(t)
	cfg := daemontest.Config(t)
	cfg.Sandbox.Image, cfg.Sandbox.Helper = image.AgentRef, filepath.Join(bin, "mass-sandbox-helper")
	cfg.Trainer.Binary, cfg.Trainer.CUDABinary = filepath.Join(bin, "mass-train"), ""
	b, err := daemon.NewBuiltins(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, daemon.Options{Config: cfg, Builtins: b})
	t.Cleanup(func() { b.ReapOrphans(context.Background()) })
	mc := func(args ...string) string {
		t.Helper()
		out, err := run(t, append([]string{"--socket", cfg.Socket}, args...)...)
		if err != nil {
			t.Fatalf("massctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	var ss search.Summary
	if err := json.Unmarshal([]byte(mc("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "1",
		"--seed", "0", "--model", "scripted", "--json")), &ss); err != nil {
		t.Fatal(err)
	}
	var gs generationfmt.Summary
	if err := json.Unmarshal([]byte(mc("generation", "start", "--tasks", ss.Task, "--model", "scripted", "--episodes", "4",
		"--min-success", "3", "--cap", "6", "--opponents", "2", "--train", "2", "--val", "1", "--train-steps", "2", "--seed", "1", "--json")), &gs); err != nil {
		t.Fatal(err)
	}
	if gs.Status != generationfmt.StatusDone || len(gs.Tasks) != 1 || len(gs.Tasks[0].Ranking) == 0 {
		t.Fatalf("generation: %+v", gs)
	}
	pages := cyclePages(t, d.Client, ss, gs)
	con, err := console.New(d.Client, nil)
	if err != nil {
		t.Fatal(err)
	}
	site := gatedConsole(t, con)
	checkCyclePages(t, site, pages)
	checkSearchPage(t, site, ss)
	browserCheck(t, site, append(pages, "/"))
}

// cyclePages names one page of every kind over the search and generation.
func cyclePages(t *testing.T, cl *client.Client, ss search.Summary, gs generationfmt.Summary) []string {
	t.Helper()
	ep := gs.Tasks[0].Train[0]
	js, err := cl.Jobs(context.Background(), client.JobFilter{Kind: generation.KindName, Limit: 1})
	if err != nil || len(js) == 0 {
		t.Fatalf("generation job: %v %v", js, err)
	}
	evs, _ := cl.Events(context.Background(), js[0].ID, 0)
	stages := 0
	for _, e := range evs {
		if e.Type == "generation_stage" {
			stages++
		}
	}
	if stages < len(generation.Stages)-1 {
		t.Errorf("generation job has %d stage events, want one per stage run", stages)
	}
	return []string{"/", "/jobs/" + js[0].ID, "/episodes", "/episodes/" + ep, "/episodes/" + ep + "/transcript",
		"/episodes/" + ep + "/audit", "/episodes/" + ep + "/workspace", "/episodes/" + ep + "/workspace/report.md",
		"/searches", "/searches/" + ss.Task + "/" + ss.SearchID, "/searches/" + ss.Task + "/" + ss.SearchID + "/v/1",
		"/generations", "/generations/1", "/reports"}
}

// checkCyclePages fetches each page and checks it shows its content.
func checkCyclePages(t *testing.T, site *consoleSite, pages []string) {
	t.Helper()
	wants := map[string][]string{
		"/transcript": {"call #1", "orchestrator", "→ agent("},
		"/audit":      {"<svg", "delegations", "chain verified", "grade:"},
		"/workspace":  {"report.md", "summary.json", "file"},
		"/v/1":        {"diff from the previous version", `class="add"`, "[dry-run]"},
		"/generations/1": {"<polyline", "train loss", "<rect", "ranking and selection", "train", "val",
			"generated tokens"},
	}
	for _, p := range pages {
		resp, err := site.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d\n%.2000s", p, resp.StatusCode, body)
			continue
		}
		for suffix, ws := range wants {
			if !strings.HasSuffix(p, suffix) {
				continue
			}
			for _, w := range ws {
				if !strings.Contains(string(body), w) {
					t.Errorf("%s lacks %q", p, w)
				}
			}
		}
	}
}

// checkSearchPage checks the search page shows versions, verdicts and the
// champion history.
func checkSearchPage(t *testing.T, site *consoleSite, ss search.Summary) {
	t.Helper()
	resp, err := site.Get("/searches/" + ss.Task + "/" + ss.SearchID)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if !strings.Contains(body, "champion arbitrations") || !strings.Contains(body, ">v1</a>") ||
		!(strings.Contains(body, "<b>win</b>") || strings.Contains(body, "<b>loss</b>") || strings.Contains(body, "<b>tie</b>")) {
		t.Errorf("search page lacks versions, verdicts or the champion history:\n%.3000s", body)
	}
}

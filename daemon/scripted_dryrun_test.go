package daemon_test

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cli"
	"github.com/mass-dev/mass/sandbox/image"
)

// newTaskFolder writes a task that is not an example: required outputs
// report.md and results/*.json, and a grader that wants a real answer.
// A non-empty recipe is written beside the spec as scripted-recipe.json.
func newTaskFolder(t *testing.T, id, recipe string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), id)
	for _, sub := range []string{"logs", "grader"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	spec := fmt.Sprintf(`id: %s
prompt: |
  Task %s: read /workspace/logs/service.log, write /workspace/report.md
  and the counts as one JSON file under /workspace/results/.
inputs:
  - path: logs
required_outputs:
  - report.md
  - "results/*.json"
hidden_paths:
  - path: grader
grader:
  command: sh /workspace/grader/check.sh
  timeout: 1m
limits:
  episode_wall_time: 5m
  agent_turns: 30
  tokens: 200000
  cpus: 1
  memory_bytes: 256MiB
`, id, id)
	files := map[string]string{"task.yaml": spec, "logs/service.log": "ok\nerror\nerror\n",
		"grader/check.sh": "if cat /workspace/results/*.json | grep -q 'errors.: 2'; then echo '{\"passed\": true}'; else echo '{\"passed\": false}'; fi\n"}
	if recipe != "" {
		files["scripted-recipe.json"] = recipe
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "task.yaml")
}

func runScripted(t *testing.T, r *searchRig, spec string) cli.RunSummary {
	t.Helper()
	out, err := r.massctl("run", "--task", spec, "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s cli.RunSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return s
}

// exportFiles reads the regular files of an episode's workspace export.
func exportFiles(t *testing.T, s cli.RunSummary) map[string]string {
	t.Helper()
	f, err := os.Open(s.WorkspaceExport)
	if err != nil {
		t.Fatalf("export of %s: %v", s.EpisodeID, err)
	}
	defer f.Close()
	files := map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("read %s: %v", s.WorkspaceExport, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			files[strings.TrimPrefix(path.Clean(h.Name), "workspace/")] = string(b)
		}
	}
}

// TestScriptedDryRunAnyTask runs the scripted model through massd on a new
// task: without a recipe its workers write every required output, labelled
// dry-run, and the grader fails honestly; with a scripted-recipe.json
// beside the spec massd keeps the recipe in the stored task directory, the
// workers write its deliverables (the grader passes), and the recipe file
// never reaches the workspace.
func TestScriptedDryRunAnyTask(t *testing.T) {
	r := newRig(t, nil, image.TestRef)

	s := runScripted(t, r, newTaskFolder(t, "log-counts", ""))
	if !s.DryRun || !s.OutputsPresent {
		t.Fatalf("dry run on a new task: dry_run %v, outputs_present %v, reason %q", s.DryRun, s.OutputsPresent, s.Reason)
	}
	files := exportFiles(t, s)
	for _, name := range []string{"report.md", "results/dry-run.json"} {
		if got := files[name]; !strings.Contains(got, "[dry-run]") {
			t.Errorf("%s is not labelled dry-run: %q (export has %v)", name, got, slices.Sorted(maps.Keys(files)))
		}
	}
	if s.Grade == nil || !s.Grade.Ran || s.Grade.Passed || s.Success {
		t.Errorf("the dry run's placeholders must fail the grader: success %v, grade %+v", s.Success, s.Grade)
	}

	recipe := `{"files": {"report.md": "Two errors in three lines.\n", "results/counts.json": "{\"errors\": 2, \"lines\": 3}\n"}}`
	s = runScripted(t, r, newTaskFolder(t, "log-counts-recipe", recipe))
	files = exportFiles(t, s)
	if got := files["results/counts.json"]; !strings.Contains(got, `"errors": 2`) {
		t.Errorf("own recipe: results/counts.json %q (export has %v)", got, slices.Sorted(maps.Keys(files)))
	}
	if s.Grade == nil || !s.Grade.Passed || !s.Success {
		t.Errorf("own recipe: success %v %q, grade %+v", s.Success, s.Reason, s.Grade)
	}
	for name, body := range files {
		if path.Base(name) == "scripted-recipe.json" || strings.Contains(body, `"files"`) {
			t.Errorf("the recipe reached the workspace: %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(r.data, "tasks", "log-counts-recipe", "scripted-recipe.json")); err != nil {
		t.Errorf("massd did not keep the recipe beside the spec: %v", err)
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunJSONOnRefusedGrader: `massctl run --json` on a spec whose grader
// validation refuses prints its JSON all the same, success false and the
// refused field named in the error, and exits non-zero.
func TestRunJSONOnRefusedGrader(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "x.csv"), []byte("a\n1\n"), 0o644)
	spec := "id: refused\nprompt: p\ninputs:\n  - path: data\nprotected_paths: [data]\n" +
		"limits:\n  episode_wall_time: 5m\n  agent_turns: 20\ngrader: python3 -c 'print(1)'\n"
	os.WriteFile(filepath.Join(dir, "task.yaml"), []byte(spec), 0o644)
	var out, errOut bytes.Buffer
	app := App("test")
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.RunContext(context.Background(), []string{"massctl", "--socket", filepath.Join(dir, "none.sock"),
		"run", "--task", filepath.Join(dir, "task.yaml"), "--json"})
	if err == nil {
		t.Fatal("a refused spec ran")
	}
	var sum RunSummary
	if jerr := json.Unmarshal(out.Bytes(), &sum); jerr != nil {
		t.Fatalf("stdout is not the JSON summary (%v): %q", jerr, out.String())
	}
	if sum.Success || !strings.Contains(sum.Error, "grader.command: ") || !strings.Contains(err.Error(), "grader.command: ") {
		t.Errorf("summary %+v, error %v", sum, err)
	}
}

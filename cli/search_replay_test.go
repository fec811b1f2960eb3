package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replay runs `massctl search replay` in-process with no massd: the
// socket names a path nothing listens on.
func replay(t *testing.T, args ...string) (map[string]any, string, error) {
	t.Helper()
	app := App("test")
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(append([]string{"massctl", "--socket", filepath.Join(t.TempDir(), "none.sock"), "search", "replay"}, args...))
	var m map[string]any
	if err == nil && strings.HasPrefix(strings.TrimSpace(out.String()), "{") {
		if jerr := json.Unmarshal(out.Bytes(), &m); jerr != nil {
			t.Fatalf("%v: %s", jerr, out.String())
		}
	}
	return m, out.String(), err
}

func TestSearchReplayReferenceFolder(t *testing.T) {
	dir := "../cycle/search/testdata/reference-search/query51_ourTeam"
	// --json after DIR, no --task, no massd.
	m, out, err := replay(t, dir, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if m["retained_version"] != nil || m["beats_reference"] != false || m["needs_arbitration"] != false {
		t.Errorf("replay of the reference folder: %s", out)
	}
	// The paper rule keeps v0 as the (unproven) champion.
	if m, out, err := replay(t, "--judging", "paper", dir, "--json"); err != nil || m["retained_version"] != float64(0) || m["beats_reference"] != false {
		t.Errorf("paper replay: %s %v", out, err)
	}
}

func TestSearchReplayOnlyRecords(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "records"), 0o755); err != nil {
		t.Fatal(err)
	}
	rows := `{"key":"v0_vs_no_harness","winner":"B"}
{"key":"v1_vs_no_harness","winner":"B","odd":[1,2]}
garbage
{"key":"v2_vs_no_harness","winner":"B"}
`
	champs := `{"key":"champion_v0_vs_v1","winner":"B","kind":"champion_arbitration"}
`
	os.WriteFile(filepath.Join(dir, "records", "comparison_history.jsonl"), []byte(rows), 0o644)
	os.WriteFile(filepath.Join(dir, "records", "champion_history.jsonl"), []byte(champs), 0o644)
	os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644)
	m, out, err := replay(t, dir, "--json")
	if err != nil || m["retained_version"] != float64(1) || m["beats_reference"] != true || m["needs_arbitration"] != true {
		t.Errorf("replay: %s %v", out, err)
	}
	if _, out, err := replay(t, dir, "--judging", "nonsense"); err == nil {
		t.Errorf("a bad rule was accepted: %s", out)
	}
}

package cli

import (
	"archive/tar"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/datadir"
)

// hostileWorkspace writes a workspace.tar and manifest into an episode
// directory: a file whose name and content are hostile, a huge line, and a
// symbolic link to a host file that must never be followed.
func hostileWorkspace(dir string) error {
	f, err := os.Create(filepath.Join(dir, "workspace.tar"))
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	body := hostile + "\n" + strings.Repeat("B", 300<<10)
	entries := []struct {
		h    tar.Header
		body string
	}{
		{tar.Header{Name: "notes/", Typeflag: tar.TypeDir, Mode: 0o755}, ""},
		{tar.Header{Name: "notes/<script>x.md", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body},
		{tar.Header{Name: "passwd", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, ""},
	}
	for _, e := range entries {
		if err := tw.WriteHeader(&e.h); err != nil {
			return err
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	man := []map[string]any{{"path": "notes", "type": "dir", "mode": 0o755},
		{"path": "notes/<script>x.md", "type": "file", "size": len(body), "mode": 0o644, "sha256": strings.Repeat("a", 64)},
		{"path": "passwd", "type": "symlink"}}
	return writeJSONFile(filepath.Join(dir, "workspace.manifest.json"), man)
}

// hostileSearch writes a search directory whose designs and rationales
// hold hostile text, as a model could have written them.
func hostileSearch(l datadir.Layout, jobID string) error {
	dir := filepath.Join(l.Search("hostile-task"), jobID)
	for _, d := range []string{"versions", "records", "evaluation_prompts/v0_to_v1"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o750); err != nil {
			return err
		}
	}
	files := map[string]string{
		"versions/multi_agent_design_v0.txt":      "Create an agent team\n" + hostile + "\n",
		"versions/multi_agent_design_v1.txt":      "Create an agent team\n" + hostile + "\nand one more\n",
		"evaluation_prompts/v0_to_v1/result.json": `{"proposal":{"why_it_should_improve":"` + jsonEsc(hostile) + `"}}`,
		"records/comparison_history.jsonl": `{"key":"v0_vs_no_harness","winner":"B","iteration":0,"candidate":"v0","opponent":"reference","against":"reference","outcome":"win","wins":1,"rationale":"x"}` + "\n" +
			`{"key":"v1_vs_no_harness","winner":"B","iteration":1,"candidate":"v1","opponent":"reference","against":"reference","outcome":"win","wins":1,"rationale":"` + jsonEsc(hostile) + `"}` + "\n",
		"records/champion_history.jsonl": `{"key":"champion_v0_vs_v1","kind":"champion_arbitration","version_a":0,"version_b":1,"winner":"B","iteration":1,"candidate":"v1","opponent":"v0","against":"champion","outcome":"win","wins":1,"champion_changed":true,"rationale":"` + jsonEsc(hostile) + `"}` + "\n",
		"retained_workflow.json":         `{"search_id":"` + jobID + `","task_id":"hostile-task","version":1,"champion":1,"beats_reference":true,"model":"scripted","design":"versions/multi_agent_design_v1.txt","finished":true}`,
		// Neither the reference nor the champion v1 delivered; v0 did.
		"records/episodes.json": `[{"slot":"reference","attempts":[],"result":{"episode_id":"ep-ref","exit":"completed","outputs_present":false}},` +
			`{"slot":"v0","attempts":[],"result":{"episode_id":"ep-v0","exit":"completed","success":true,"outputs_present":true}},` +
			`{"slot":"v1","attempts":[],"result":{"episode_id":"ep-v1-` + jsonEsc(hostile) + `","exit":"completed","outputs_present":false,"dry_run":true}}]`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o640); err != nil {
			return err
		}
	}
	return nil
}

// hostileGeneration writes generation 1 with hostile ids and reasons and a
// short metrics log.
func hostileGeneration(l datadir.Layout) error {
	dir := l.Generation("1")
	if err := os.MkdirAll(filepath.Join(dir, "train"), 0o750); err != nil {
		return err
	}
	sum := map[string]any{"generation": 1, "model": "gen-1", "parent": "scripted", "status": "done",
		"stages": []any{map[string]any{"name": "collect", "seconds": 1.5}},
		"tasks": []any{map[string]any{"id": "hostile-task", "episodes": 3, "successful": 2, "judgments": 2,
			"ranking": []any{map[string]any{"id": hostile, "score": 0.4, "rank": 1}, map[string]any{"id": "e-2", "score": -0.4, "rank": 2}},
			"train":   []string{hostile}, "val": []string{"e-2"}}},
		"excluded": []any{map[string]any{"id": "t2", "reason": hostile}},
		"tokens":   map[string]any{"generated": 10, "stored_supervised": 5, "processed_supervised": 3}}
	if err := writeJSONFile(filepath.Join(dir, "generation.json"), sum); err != nil {
		return err
	}
	metrics := `{"step":1,"loss":2.5,"lr":0.001,"steps":3}` + "\n" + `{"step":2,"loss":2.1,"steps":3}` + "\n" +
		`{"step":2,"val_loss":2.3,"steps":3}` + "\n" + `{"step":3,"loss":1.9,"steps":3}` + "\n"
	return os.WriteFile(filepath.Join(dir, "train", "metrics.jsonl"), []byte(metrics), 0o640)
}

func jsonEsc(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func writeJSONFile(p string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o640)
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const dataFixtures = "../trainer/tokenizer/testdata"

func runData(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	app := App("test")
	var out, errb bytes.Buffer
	app.Reader, app.Writer, app.ErrWriter = bytes.NewReader(stdin), &out, &errb
	if err := app.Run(append([]string{"massctl", "data"}, args...)); err != nil {
		t.Fatalf("massctl data %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

func jsonLines(t *testing.T, b []byte) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestDataTokenizeAndRenderFixtures(t *testing.T) {
	for _, tc := range []struct {
		cmd, file string
		fields    []string
	}{
		{"tokenize", "encode.jsonl", []string{"ids"}},
		{"render-chat", "chat.jsonl", []string{"text", "ids", "assistant_mask"}},
	} {
		in, err := os.ReadFile(filepath.Join(dataFixtures, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		want := jsonLines(t, in)
		// Feed only the inputs: any other key would be a template kwarg.
		var feed bytes.Buffer
		for _, w := range want {
			line := map[string]json.RawMessage{}
			for k, v := range w {
				if !slices.Contains(tc.fields, k) || k == "text" && tc.cmd == "tokenize" {
					line[k] = v
				}
			}
			b, _ := json.Marshal(line)
			feed.Write(append(b, '\n'))
		}
		got := jsonLines(t, runData(t, feed.Bytes(), tc.cmd, "--tokenizer", dataFixtures))
		if len(got) != len(want) {
			t.Fatalf("%s: got %d lines, want %d", tc.cmd, len(got), len(want))
		}
		for i := range want {
			for _, f := range tc.fields {
				var g, w any
				json.Unmarshal(got[i][f], &g)
				json.Unmarshal(want[i][f], &w)
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s line %d field %s differs", tc.cmd, i+1, f)
				}
			}
		}
	}
}

func TestDataBuildSynthetic(t *testing.T) {
	dir := t.TempDir()
	runData(t, nil, "synth", "--out", filepath.Join(dir, "eps"), "--episodes", "2", "--tasks", "2", "--turns", "3")
	out := string(runData(t, nil, "build", "--quiet", "--tokenizer", dataFixtures, "--episodes", filepath.Join(dir, "eps"), "--out", filepath.Join(dir, "ds")))
	for _, want := range []string{"TOTAL", "orchestrator", "worker", "supervised", "task-00", "task-01"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	shown := string(runData(t, nil, "show", "--tokenizer", dataFixtures, filepath.Join(dir, "ds"), "0"))
	if !strings.Contains(shown, "<|im_start|>assistant\n«<think>") || !strings.Contains(shown, "<|im_end|>»") {
		t.Errorf("show: supervised spans not marked as expected:\n%s", shown)
	}
	for _, f := range []string{"rows.jsonl", "windows.bin", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(dir, "ds", f)); err != nil {
			t.Error(err)
		}
	}
}

// TestDataBuildEligibility: a failed grade is excluded with its reason, a
// selection file picks train and val episodes, and an existing dataset
// needs --force.
func TestDataBuildEligibility(t *testing.T) {
	dir := t.TempDir()
	eps := filepath.Join(dir, "eps")
	runData(t, nil, "synth", "--out", eps, "--episodes", "3", "--tasks", "1", "--turns", "2")
	ents, err := os.ReadDir(eps)
	if err != nil || len(ents) != 3 {
		t.Fatalf("synth: %v %v", ents, err)
	}
	bad := ents[0].Name()
	failed := `{"episode_id":"` + bad + `","exit":"completed","outputs_present":true,"grade":{"ran":true,"passed":false},"guards":{"integrity_checked":true}}`
	if err := os.WriteFile(filepath.Join(eps, bad, "run_status.json"), []byte(failed), 0o644); err != nil {
		t.Fatal(err)
	}
	sel := filepath.Join(dir, "sel.json")
	if err := os.WriteFile(sel, []byte(`{"train":["`+bad+`","`+ents[1].Name()+`"],"val":["`+ents[2].Name()+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	app := App("test")
	var out, errb bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errb
	args := []string{"massctl", "data", "build", "--quiet", "--tokenizer", dataFixtures, "--episodes", eps, "--out", filepath.Join(dir, "ds"), "--selection", sel}
	if err := app.Run(args); err != nil {
		t.Fatalf("build: %v\n%s", err, errb.String())
	}
	if want := "excluded " + bad + ": the task's grader did not pass"; !strings.Contains(errb.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errb.String())
	}
	var m struct {
		Episodes int `json:"episodes"`
	}
	for ds, want := range map[string]int{"ds": 1, "ds/val": 1} {
		b, err := os.ReadFile(filepath.Join(dir, ds, "manifest.json"))
		if err != nil || json.Unmarshal(b, &m) != nil || m.Episodes != want {
			t.Errorf("%s: %d episodes (%v), want %d", ds, m.Episodes, err, want)
		}
	}
	if err := App("test").Run(args); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("rebuild without --force: %v", err)
	}
}

package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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
		got := jsonLines(t, runData(t, in, tc.cmd, "--tokenizer", dataFixtures))
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

package episodefmt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestInfoRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := Info{EpisodeID: "ep-1", TaskID: "t", Mode: ModeWorkflow, Model: "scripted", DryRun: true, Prompt: "p",
		Workflow: "w", TeacherPrompt: "tp", ProtectedPaths: []string{"data"}, Started: time.Unix(5, 0).UTC(), DaemonID: "d", JobID: "j"}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, EpisodeFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadInfo = %+v, want %+v", got, want)
	}
	if _, err := ReadInfo(t.TempDir()); err == nil {
		t.Error("ReadInfo of a directory without episode.json succeeded")
	}
	if err := os.WriteFile(filepath.Join(dir, EpisodeFile), []byte(`{"episode_id": 7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadInfo(dir); err == nil {
		t.Error("ReadInfo accepted a number as episode_id")
	}
}

func FuzzDecodeInfo(f *testing.F) {
	f.Add([]byte(`{"episode_id":"ep-1","task_id":"t","mode":"bare","started":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"protected_paths":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := DecodeInfo(b)
		if err != nil {
			return
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeInfo(out)
		if err != nil || !slices.Equal(again.ProtectedPaths, in.ProtectedPaths) || again.EpisodeID != in.EpisodeID {
			t.Fatalf("re-encoded info does not decode to itself: %v", err)
		}
	})
}

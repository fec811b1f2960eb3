package episode

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/taskspec"
)

// Defect 6: a huge final answer was copied whole into run_status.json,
// which audit verify then refused as too large.
func TestLargeFinalIsCapped(t *testing.T) {
	big := strings.Repeat("answer ", (4<<20)/7)
	d, _ := fakeModel(t, func(*fakeopenai.Request) fakeopenai.Reply { return fakeopenai.Reply{Content: big} }, nil)
	st, dir := runEpisode(t, d, testTask(t, 2*time.Minute), "")
	if !st.Success {
		t.Fatalf("episode failed (%s: %s)", st.Failure, st.Reason)
	}
	if len(st.Final) > MaxFinalBytes+100 || st.FinalBytes != len(big) {
		t.Errorf("final is %d bytes with final_bytes %d; want at most %d and %d", len(st.Final), st.FinalBytes, MaxFinalBytes, len(big))
	}
	fi, err := os.Stat(filepath.Join(dir, StatusFile))
	if err != nil || fi.Size() > 1<<20 {
		t.Fatalf("run_status.json: %v, size %d", err, fi.Size())
	}
	if rep := auditEpisode(t, dir, st.EpisodeID); !rep.Ledger.Verified {
		t.Errorf("ledger does not verify: %+v", rep.Ledger)
	}
}

// Defect 9: a failed export left a partial workspace.tar that the API
// served. Here the export cap is below what the workspace holds.
func TestFailedExportLeavesNoPartialTar(t *testing.T) {
	d, _ := fakeModel(t, script(calls(sh("head -c 300000 /dev/urandom > /workspace/big.bin"))), nil)
	d.ExportBytes = 100_000
	spec := testTask(t, 2*time.Minute)
	dir := filepath.Join(t.TempDir(), "ep")
	st, err := Run(context.Background(), d, Options{Task: spec, TaskID: spec.ID, Model: "fake", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "export workspace") || st.Success {
		t.Fatalf("episode = %v, %v (%s); want a failed export", st.Success, err, st.Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, ExportFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after a failed export: %v, want none", ExportFile, err)
	}
	if len(leftovers(t, st.EpisodeID)) != 0 {
		t.Errorf("containers or volumes left: %v", leftovers(t, st.EpisodeID))
	}
}

func TestInputCapBelowExportCap(t *testing.T) {
	if taskspec.MaxInputBytes >= DefaultExportBytes {
		t.Errorf("task inputs may hold %d bytes, the export cap is %d", taskspec.MaxInputBytes, DefaultExportBytes)
	}
}

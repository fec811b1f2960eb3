package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/train"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// TestTrainSubmitsJob runs `massctl train` against a real massd whose
// "train" kind runs a freshly built mass-train, and waits for the job.
func TestTrainSubmitsJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mass-train and trains a micro model")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mass-train")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/mass-dev/mass/cmd/mass-train").CombinedOutput(); err != nil {
		t.Fatalf("build mass-train: %v\n%s", err, out)
	}
	cfg := startDaemon(t, trainjob.Kind(trainjob.Binary(bin)))
	cl := client.New(cfg.Socket)

	mc, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	if err := model.NewRandom(mc, 1).Save(filepath.Join(dir, "micro"), "F32", 0); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := train.WriteToyRows(f, 16, 12, 8, 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	out, err := run(t, "--socket", cfg.Socket, "train", "--model", filepath.Join(dir, "micro"), "--data", filepath.Join(dir, "rows.jsonl"),
		"--name", "cli-run", "--steps", "4", "--batch", "2", "--rank", "4", "--alpha", "8", "--lr", "0.01", "--dropout", "0")
	if err != nil {
		t.Fatalf("massctl train: %v\n%s", err, out)
	}
	id := strings.Fields(out)[0]
	var j api.Job
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if j, err = cl.Job(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if api.Terminal(j.State) || time.Now().After(deadline) {
			break
		}
	}
	if got, want := j.State, api.StateSucceeded; got != want {
		t.Fatalf("job %s state %s (error %q), want %s", id, got, j.Error, want)
	}
	if j.Progress == nil || j.Progress.Counters["step"] != 4 {
		t.Errorf("progress %+v, want step 4", j.Progress)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "runs", "cli-run", "result.json")); err != nil {
		t.Errorf("run result missing: %v", err)
	}
}

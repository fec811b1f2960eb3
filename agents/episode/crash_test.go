package episode_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mass-dev/mass/agents/episode"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

// TestKillDaemonMidEpisode runs a real massd, kills it with SIGKILL while
// an episode's worker is running, restarts it, and checks: the cut-off
// episode has a consistent record (ledger verifies, recording parses,
// run_status says infrastructure), none of its containers survive the
// restart, and the job is retried as a fresh episode that completes.
func TestKillDaemonMidEpisode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and restarts massd; run without -short")
	}
	episode.NeedEngine(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	for _, pkg := range []string{"./cmd/massd", "./sandbox/helper/cmd/mass-sandbox-helper"} {
		cmd := exec.Command("go", "build", "-o", bin+"/", "github.com/mass-dev/mass/"+strings.TrimPrefix(pkg, "./"))
		if strings.Contains(pkg, "helper") {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static: it runs inside the containers
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	slow := func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := scripted.Policy(r)
		rep.Delay = 400 * time.Millisecond
		return rep
	}
	srv := fakeopenai.New(slow)
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	data, sock := filepath.Join(tmp, "data"), filepath.Join(tmp, "massd.sock")
	conf := fmt.Sprintf("socket: %s\ndata_dir: %s\nsandbox:\n  image: %s\n  helper: %s\nmodels:\n  fake:\n    base_url: %s\n    model: fake-model\n",
		sock, data, image.TestRef, filepath.Join(bin, "mass-sandbox-helper"), srv.URL())
	if err := os.WriteFile(filepath.Join(tmp, "massd.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, "massd"), "--config", filepath.Join(tmp, "massd.yaml"))
		var logBuf bytes.Buffer
		cmd.Stderr, cmd.Stdout = &logBuf, &logBuf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cl := client.New(sock)
		for i := 0; ; i++ {
			if _, err := cl.Health(context.Background()); err == nil {
				return cmd
			}
			if i > 100 {
				cmd.Process.Kill()
				t.Fatalf("massd did not come up:\n%s", logBuf.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	d1 := start()
	defer func() { d1.Process.Kill(); d1.Wait() }()
	defer func() {
		// Whatever happened, leave no containers of this test's massd behind.
		if rt, err := docker.New(context.Background(), docker.Config{DaemonID: datadir.New(data).SandboxDaemonID(),
			HelperPath: filepath.Join(bin, "mass-sandbox-helper"), Logger: episode.Quiet}); err == nil {
			rt.ReapOrphans(context.Background(), func(string) bool { return false })
			rt.Close()
		}
	}()
	cl := client.New(sock)
	ctx := context.Background()

	spec := episode.TestTask(t, 5*time.Minute)
	specPath := filepath.Join(spec.Dir, "spec.yaml")
	yaml := "id: crash\nprompt: run the dry run\ninputs:\n  - path: data\n  - path: notes.md\nprotected_paths:\n  - data\nlimits:\n  episode_wall_time: 5m\n  agent_turns: 30\n"
	if err := os.WriteFile(specPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	task, err := cl.AddTask(ctx, specPath)
	if err != nil {
		t.Fatal(err)
	}
	job, err := cl.SubmitJob(ctx, api.JobRequest{Kind: episode.KindName, TaskID: task.ID, Params: []byte(`{"model":"fake"}`)})
	if err != nil {
		t.Fatal(err)
	}

	// Wait until worker-1 has started, then kill -9.
	var first string
	deadline := time.Now().Add(2 * time.Minute)
	for first == "" || !ledgerHas(t, filepath.Join(data, "episodes", first, episode.LedgerFile), `"agent":"worker-1"`) {
		if time.Now().After(deadline) {
			t.Fatal("episode never reached worker-1")
		}
		if eps, err := cl.Episodes(ctx, client.EpisodeFilter{}); err == nil && len(eps) > 0 {
			first = eps[0].ID
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := d1.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d1.Wait()
	rt, err := docker.New(ctx, docker.Config{DaemonID: datadir.New(data).SandboxDaemonID(), HelperPath: filepath.Join(bin, "mass-sandbox-helper"), Logger: episode.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if left, _ := rt.List(ctx, first); len(left) == 0 {
		t.Log("note: no containers were running at the moment of the kill")
	}

	d2 := start()
	defer func() { d2.Process.Signal(syscall.SIGTERM); d2.Wait() }()
	var final api.Job
	for {
		if time.Now().After(deadline.Add(2 * time.Minute)) {
			t.Fatalf("job %s never finished after the restart (state %s)", job.ID, final.State)
		}
		final, err = cl.Job(ctx, job.ID)
		if err == nil && api.Terminal(final.State) && final.State != api.StateInterrupted {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got, want := final.State, api.StateSucceeded; got != want {
		t.Fatalf("retried job state = %s (%s), want %s", got, final.Error, want)
	}

	dir := filepath.Join(data, "episodes", first)
	st, err := episode.ReadStatus(dir)
	if err != nil {
		t.Fatalf("interrupted episode has no run_status.json: %v", err)
	}
	if st.Exit != episode.ExitFailed || st.Failure != episode.FailInfra {
		t.Errorf("interrupted episode status = %s/%s, want failed/infrastructure", st.Exit, st.Failure)
	}
	f, err := os.Open(filepath.Join(dir, episode.LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	n, err := ledger.Verify(f, first)
	f.Close()
	if err != nil || n < 2 {
		t.Errorf("interrupted ledger: %d records verified, %v", n, err)
	}
	if recs, err := record.ReadFile(filepath.Join(dir, episode.RequestsFile)); err != nil || len(recs) == 0 {
		t.Errorf("interrupted recording: %d records, %v", len(recs), err)
	}
	if left, err := rt.List(ctx, first); err != nil || len(left) != 0 {
		t.Errorf("orphans of the killed episode after restart: %+v (%v)", left, err)
	}
	var res episode.Result
	if err := json.Unmarshal(final.Result, &res); err != nil || !res.Success || res.EpisodeID == first {
		t.Errorf("retry result = %+v (%v), want a fresh successful episode", res, err)
	}
	if left, err := rt.List(ctx, ""); err != nil || len(left) != 0 {
		t.Errorf("containers or volumes left at the end: %+v (%v)", left, err)
	}
}

func ledgerHas(t *testing.T, p, needle string) bool {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.Contains(sc.Text(), needle) {
			return true
		}
	}
	return false
}

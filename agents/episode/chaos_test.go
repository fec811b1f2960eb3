package episode_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"github.com/mass-dev/mass/agents/episode"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/agents/model/fakeopenai"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
)

// chaosKills is how many times TestChaosKillNine kills massd.
const chaosKills = 3

// TestChaosKillNine kill -9s a real massd a few times while episodes run
// and task uploads stream in, restarts it each time, lets the jobs finish
// and then checks every invariant with massd stopped: every job terminal,
// each job's events numbered 1..N with a started event for every attempt,
// every episode closed with a run_status.json and a ledger that verifies
// against it, no container or volume left for the data dir, no upload
// left half-unpacked, and SQLite's integrity check ok.
func TestChaosKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills massd; run without -short")
	}
	episode.NeedEngine(t)
	tmp := t.TempDir()
	bin := buildChaosBinaries(t, tmp)
	slow := func(r *fakeopenai.Request) fakeopenai.Reply {
		rep := scripted.Policy(r)
		rep.Delay = 50 * time.Millisecond
		return rep
	}
	srv := fakeopenai.New(slow, fakeopenai.WithoutHistory())
	if err := srv.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	data, sock := filepath.Join(tmp, "data"), filepath.Join(tmp, "massd.sock")
	conf := fmt.Sprintf("socket: %s\ndata_dir: %s\njobs:\n  concurrency: 2\nsandbox:\n  image: %s\n  helper: %s\nmodels:\n  fake:\n    base_url: %s\n    model: fake-model\n",
		sock, data, image.TestRef, filepath.Join(bin, "mass-sandbox-helper"), srv.URL())
	confPath := filepath.Join(tmp, "massd.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := docker.New(context.Background(), docker.Config{DaemonID: datadir.New(data).SandboxDaemonID(), HelperPath: filepath.Join(bin, "mass-sandbox-helper"), Logger: episode.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { rt.ReapOrphans(context.Background(), func(string) bool { return false }); rt.Close() }()

	ctx := context.Background()
	cl := client.New(sock)
	d := startChaosMassd(t, bin, confPath, sock)
	task, err := cl.AddTask(ctx, chaosTask(t, "chaos", 0))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := cl.SubmitJob(ctx, api.JobRequest{Kind: episode.KindName, TaskID: task.ID, Params: []byte(`{"model":"fake"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	// Uploads run throughout; some are cut by the kills.
	stopUploads := uploadLoop(t, cl)
	began := time.Now()
	for kill := range chaosKills {
		time.Sleep(time.Duration(1500+700*kill) * time.Millisecond)
		t.Logf("kill %d: massd peak RSS %s", kill+1, peakRSS(d.Process.Pid))
		d.Process.Signal(syscall.SIGKILL)
		d.Wait()
		d = startChaosMassd(t, bin, confPath, sock)
	}
	stopUploads()
	waitJobsTerminal(t, cl, 4*time.Minute)
	t.Logf("jobs terminal %s after the first kill", time.Since(began).Round(time.Second))
	d.Process.Signal(syscall.SIGTERM)
	if err := d.Wait(); err != nil {
		t.Errorf("massd exit after SIGTERM: %v", err)
	}
	checkChaosInvariants(t, data, rt)
}

// uploadLoop adds tasks with a 4 MiB input one after another until the
// returned function is called (and then waits for the last one).
func uploadLoop(t *testing.T, cl *client.Client) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			cl.AddTask(context.Background(), chaosTask(t, fmt.Sprintf("up%d", i), 4<<20))
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return func() { close(done); wg.Wait() }
}

func waitJobsTerminal(t *testing.T, cl *client.Client, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		js, err := cl.Jobs(context.Background(), client.JobFilter{})
		done := err == nil
		for _, j := range js {
			done = done && api.Terminal(j.State)
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs not terminal %s after the last restart: %+v", within, js)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func buildChaosBinaries(t *testing.T, tmp string) string {
	t.Helper()
	bin := filepath.Join(tmp, "bin")
	for _, pkg := range []string{"cmd/massd", "sandbox/helper/cmd/mass-sandbox-helper"} {
		cmd := exec.Command("go", "build", "-o", bin+"/", "github.com/mass-dev/mass/"+pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // the helper runs inside the containers
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
	}
	return bin
}

func startChaosMassd(t *testing.T, bin, conf, sock string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "massd"), "--config", conf)
	var logBuf bytes.Buffer
	cmd.Stderr, cmd.Stdout = &logBuf, &logBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	cl := client.New(sock)
	for i := 0; ; i++ {
		if _, err := cl.Health(context.Background()); err == nil {
			return cmd
		}
		if i > 300 {
			cmd.Process.Kill()
			t.Fatalf("massd did not come up:\n%s", logBuf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chaosTask writes a task directory (with an input of pad extra bytes, so
// that uploads take a moment) and returns its spec's path.
func chaosTask(t *testing.T, id string, pad int) string {
	spec := episode.TestTask(t, 5*time.Minute)
	if pad > 0 {
		if err := os.WriteFile(filepath.Join(spec.Dir, "data", "pad.bin"), bytes.Repeat([]byte("p"), pad), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(spec.Dir, "spec.yaml")
	yaml := "id: " + id + "\nprompt: run the dry run\ninputs:\n  - path: data\n  - path: notes.md\nprotected_paths:\n  - data\nlimits:\n  episode_wall_time: 5m\n  agent_turns: 30\n"
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkChaosInvariants(t *testing.T, data string, rt *docker.Runtime) {
	t.Helper()
	ctx := context.Background()
	lay := datadir.New(data)
	db, err := sql.Open("sqlite", "file:"+lay.DB()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("sqlite integrity_check = %q, %v", integrity, err)
	}
	db.Close()
	st, err := store.Open(ctx, lay.DB())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	js, err := st.Jobs(ctx, store.JobFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	for _, j := range js {
		attempts += j.Attempt
		t.Logf("job %s: %s at attempt %d", j.ID, j.State, j.Attempt)
		if !api.Terminal(j.State) {
			t.Errorf("job %s is %s after the chaos", j.ID, j.State)
		}
		evs, err := st.Events(ctx, j.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		started := map[int]bool{}
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Errorf("job %s: event %d has seq %d (gap or duplicate)", j.ID, i+1, ev.Seq)
			}
			if ev.Type == "started" {
				a, _ := ev.Fields["attempt"].(float64)
				started[int(a)] = true
			}
		}
		for a := 1; a <= j.Attempt; a++ {
			if !started[a] {
				t.Errorf("job %s: attempt %d has no started event: %v", j.ID, a, typesOf(evs))
			}
		}
	}
	t.Logf("%d jobs, %d attempts in all, across %d kills", len(js), attempts, chaosKills)
	eps, err := os.ReadDir(lay.Episodes())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eps {
		dir := filepath.Join(lay.Episodes(), e.Name())
		if _, err := episode.ReadStatus(dir); err != nil {
			t.Errorf("episode %s has no run_status.json: %v", e.Name(), err)
		}
		if _, err := os.Stat(filepath.Join(dir, episode.LedgerFile)); err != nil {
			continue // stopped before its ledger existed; Recover says so
		}
		ls, err := audit.VerifyLedger(ctx, audit.DirSource{Dir: dir}, e.Name())
		if err != nil || !ls.Verified || !ls.HeadChecked {
			t.Errorf("episode %s: ledger %+v, %v; want verified against run_status.json", e.Name(), ls, err)
		}
	}
	t.Logf("%d episodes checked", len(eps))
	if left, err := rt.List(ctx, ""); err != nil || len(left) != 0 {
		t.Errorf("containers or volumes left for the data dir: %+v (%v)", left, err)
	}
	if inc, _ := filepath.Glob(filepath.Join(lay.Tasks(), ".incoming-*")); len(inc) != 0 {
		t.Errorf("half-unpacked uploads left: %v", inc)
	}
}

func typesOf(evs []api.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.Type + " ")
	}
	return b.String()
}

// peakRSS is a process's VmHWM from /proc.
func peakRSS(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

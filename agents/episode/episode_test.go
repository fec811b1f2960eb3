package episode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/agents/record"
)

// TestEndToEnd runs the dry-run team on real containers through the fake
// endpoint: the orchestrator delegates to two workers, the second reads the
// first's Python file. It checks the outcome, the audit, and that every
// thread in api_requests.jsonl replays exactly what the server received.
func TestEndToEnd(t *testing.T) {
	d, srv := fakeModel(t, scripted.Policy, nil)
	st, dir := runEpisode(t, d, testTask(t, 5*time.Minute), "")
	if !st.Success || st.Exit != ExitCompleted {
		t.Fatalf("status = %s/%s %q, want a completed success", st.Exit, st.Failure, st.Reason)
	}
	if got, want := st.Agents, 3; got != want {
		t.Errorf("agents = %d, want %d", got, want)
	}
	if left := leftovers(t, st.EpisodeID); len(left) != 0 {
		t.Errorf("containers/volumes left after the episode: %+v", left)
	}

	lr := ledgerRecords(t, dir)
	if last := lr[len(lr)-1]; st.LedgerHead == nil || st.LedgerHead.Seq != last.Seq || st.LedgerHead.Hash != last.Hash {
		t.Errorf("run_status ledger_head = %+v, want seq %d hash %s", st.LedgerHead, last.Seq, last.Hash)
	}
	rep := auditEpisode(t, dir, st.EpisodeID)
	if got, want := rep.Delegation, 2; got != want {
		t.Errorf("audit delegation = %d, want %d", got, want)
	}
	if got, want := rep.CodeHandoff, 1; got != want {
		t.Errorf("audit code handoff = %d, want %d", got, want)
	}
	if !rep.Ledger.Verified {
		t.Errorf("ledger does not verify: %+v", rep.Ledger)
	}

	recs, err := record.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, recs)
	// What the server received is exactly what was recorded, call by call.
	got := srv.Requests()
	if len(got) != len(recs) {
		t.Fatalf("server saw %d requests, recording has %d", len(got), len(recs))
	}
	for i, r := range recs {
		var sent struct {
			Messages []any `json:"messages"`
			Tools    []any `json:"tools"`
		}
		if err := json.Unmarshal(got[i].Raw, &sent); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sent.Messages, asAny(t, r.Request.Messages)) {
			t.Errorf("call %d: recorded messages differ from the messages sent", r.Seq)
		}
		if !reflect.DeepEqual(sent.Tools, asAny(t, r.Request.Tools)) {
			t.Errorf("call %d: recorded tools differ from the tools sent", r.Seq)
		}
	}
	threads := record.Threads(recs)
	if got, want := len(threads), 3; got != want {
		t.Errorf("threads = %d, want %d", got, want)
	}
	for _, w := range []string{"worker-1", "worker-2"} {
		if th := threads[w]; len(th) == 0 || th[0].Parent != "orchestrator" || th[0].Role != record.RoleWorker {
			t.Errorf("thread %s: missing or wrong parent/role", w)
		}
	}

	var info Info
	readJSON(t, filepath.Join(dir, EpisodeFile), &info)
	if got, want := info.TeacherPrompt, info.Prompt; got != want {
		t.Errorf("bare episode teacher prompt = %q, want the task %q", got, want)
	}
	for _, name := range []string{ExportFile, ExportManFile, "manifests/worker-1.json", "manifests/worker-2.json", "manifests/orchestrator.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	var man []struct {
		Path string `json:"path"`
	}
	readJSON(t, filepath.Join(dir, ExportManFile), &man)
	found := false
	for _, f := range man {
		found = found || strings.HasSuffix(f.Path, "dryrun/hello.py")
	}
	if !found {
		t.Errorf("export manifest lacks dryrun/hello.py: %+v", man)
	}
}

// checkReplay verifies that in every thread, call n+1's messages are call
// n's messages followed by call n's response and then tool results.
func checkReplay(t *testing.T, recs []record.Record) {
	t.Helper()
	for name, th := range record.Threads(recs) {
		for i := 1; i < len(th); i++ {
			prev, cur := th[i-1], th[i]
			want := append(asAny(t, prev.Request.Messages), asAny(t, prev.Response.Message())[0:1]...)
			got := asAny(t, cur.Request.Messages)
			if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
				t.Fatalf("thread %s call %d does not extend call %d with its response", name, cur.Seq, prev.Seq)
			}
			for _, m := range got[len(want):] {
				if m.(map[string]any)["role"] != "tool" {
					t.Errorf("thread %s call %d: message after the response has role %v, want tool", name, cur.Seq, m.(map[string]any)["role"])
				}
			}
		}
	}
}

func asAny(t *testing.T, v any) []any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	if b[0] == '{' {
		b = append(append([]byte("["), b...), ']')
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", p, err)
	}
}

func auditEpisode(t *testing.T, dir, id string) *audit.Report {
	t.Helper()
	in, err := audit.Load(context.Background(), audit.DirSource{Dir: dir}, id)
	if err != nil {
		t.Fatal(err)
	}
	return audit.Compute(in)
}

func ledgerRecords(t testing.TB, dir string) []ledger.Record {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, LedgerFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := ledger.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestStreaming runs the team with server-sent events: the assembled
// responses must record and replay like the plain JSON ones.
func TestStreaming(t *testing.T) {
	d, srv := fakeModel(t, scripted.Policy, func(c *model.Config) { c.Stream = true })
	st, dir := runEpisode(t, d, testTask(t, 5*time.Minute), "")
	if !st.Success {
		t.Fatalf("streamed episode failed: %s", st.Reason)
	}
	if !srv.Requests()[0].Stream {
		t.Fatal("requests were not streamed")
	}
	recs, err := record.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, recs)
	if rep := auditEpisode(t, dir, st.EpisodeID); rep.Delegation != 2 || rep.CodeHandoff != 1 {
		t.Errorf("audit delegation %d, handoff %d; want 2, 1", rep.Delegation, rep.CodeHandoff)
	}
}

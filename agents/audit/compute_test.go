package audit

import (
	"bytes"
	"fmt"
	"github.com/mass-dev/mass/agents/guard"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/ledger"
)

func TestTeamEpisode(t *testing.T) {
	r := audit(t, teamEpisode(t), "ep-team")

	counters := []struct {
		name      string
		got, want int
	}{
		{"delegation", r.Delegation, 2},
		{"code_handoff", r.CodeHandoff, 1},
		{"worker_revision", r.WorkerRevision, 2},
		{"orchestrator_revision", r.OrchestratorRevision, 1},
		{"protected_path_violations", r.ProtectedPathViolations, 0}, // the denial held: an attempt, not a violation
		{"protected_path_attempts", r.ProtectedPathAttempts, 1},
		{"loop_halts", r.LoopHalts, 1},
		{"shell_changed_files", r.ShellChangedFiles, 2},
		{"ledger records", r.Ledger.Records, 28},
	}
	for _, c := range counters {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if !r.Ledger.Verified {
		t.Errorf("ledger not verified: %s", r.Ledger.Error)
	}
	if r.Model != "scripted" || !r.DryRun {
		t.Errorf("model, dry_run = %q, %v, want scripted, true", r.Model, r.DryRun)
	}
	if got, want := r.Handoffs, []Handoff{{Path: "/workspace/model.py", Writer: "worker-1", Reader: "worker-2",
		WriteSeq: 5, FinishSeq: 9, ReadSeq: 12}}; !reflect.DeepEqual(got, want) {
		t.Errorf("handoffs = %+v, want %+v", got, want)
	}
	if got, want := r.Delegations, []Delegation{{10, "orchestrator", "worker-1"}, {19, "orchestrator", "worker-2"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("delegations = %+v, want %+v", got, want)
	}
	if got, want := r.Revisions, []Revision{
		{5, "worker-1", RoleWorker, "edit", "/workspace/model.py"},
		{16, "worker-2", RoleWorker, "write_file", "/workspace/model.py"},
		{26, "orchestrator", RoleOrchestrator, "edit", "/workspace/plan.md"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("revisions = %+v, want %+v", got, want)
	}
	if got, want := r.ShellChanges, []ShellChange{
		{Path: "/workspace/out.txt", Change: "changed", Agent: "worker-1", FinishSeq: 9},
		{Path: "/workspace/out.txt", Change: "deleted", Agent: "worker-2", FinishSeq: 18},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("shell changes = %+v, want %+v", got, want)
	}
	if got, want := r.Guards.Attempts, []guard.Attempt{{Seq: 7, Agent: "worker-1", Tool: "write_file", Command: "write_file /workspace/eval/score.py",
		Path: "/workspace/eval/score.py", Result: "denied: permission denied: protected path"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("attempts = %+v, want %+v", got, want)
	}
	if got, want := r.Halts, []LoopHalt{{23, "worker-3", "identical_tool_calls", "loop: 5 identical tool calls"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("halts = %+v, want %+v", got, want)
	}

	wantRows := []AgentRow{
		{Agent: "orchestrator", Role: RoleOrchestrator, Turns: 4, PromptTokens: 4000, CompletionTokens: 800, ToolCalls: 6,
			FailedToolCalls: 1, FilesWritten: 2, WallMS: 40500, Finished: true, Stop: "final"},
		{Agent: "worker-1", Role: RoleWorker, Parent: "orchestrator", Turns: 3, PromptTokens: 1500, CompletionTokens: 300,
			ToolCalls: 4, FailedToolCalls: 1, ShellCommands: 1, FilesWritten: 1, ShellChanged: 1, WallMS: 9000, Finished: true, Stop: "final"},
		{Agent: "worker-2", Role: RoleWorker, Parent: "orchestrator", Turns: 2, ModelErrors: 1, PromptTokens: 1300, CompletionTokens: 110,
			ToolCalls: 6, ShellCommands: 1, FilesWritten: 2, ShellChanged: 1, WallMS: 10500, Finished: true, Stop: "final"},
		{Agent: "worker-3", Role: RoleWorker, Parent: "orchestrator", Turns: 5, PromptTokens: 1500, CompletionTokens: 50,
			ToolCalls: 2, ShellCommands: 2, WallMS: 6000, Finished: true, Stop: "loop"},
		{Agent: "evaluator", Role: "auxiliary", Turns: 1, PromptTokens: 2000, CompletionTokens: 30},
	}
	if len(r.Agents) != len(wantRows) {
		t.Fatalf("agents = %+v, want %d rows", r.Agents, len(wantRows))
	}
	for i := range wantRows {
		if got, want := r.Agents[i], wantRows[i]; got != want {
			t.Errorf("row %d =\n%+v\nwant\n%+v", i, got, want)
		}
	}
}

// TestHandoffRules checks each clause of the code-handoff definition on a
// small ledger of its own.
func TestHandoffRules(t *testing.T) {
	const o, w1, w2, w3 = "orchestrator", "worker-1", "worker-2", "worker-3"
	tests := []struct {
		name  string
		build func(b *episodeBuilder)
		want  []Handoff
	}{
		{"read before writer finished", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.read(w2, "/workspace/a.py", true)
			b.finish(w1, "final", nil, nil)
		}, nil},
		{"orchestrator edit in between keeps the author", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.finish(w1, "final", nil, nil)
			b.write(o, "edit", "/workspace/a.py", "1", "2")
			b.read(w2, "/workspace/a.py", true)
		}, []Handoff{{Path: "/workspace/a.py", Writer: w1, Reader: w2, WriteSeq: 5, FinishSeq: 6, ReadSeq: 8}}},
		{"writer is the orchestrator", func(b *episodeBuilder) {
			b.write(o, "write_file", "/workspace/a.py", "", "1")
			b.finish(o, "final", nil, nil)
			b.read(w2, "/workspace/a.py", true)
		}, nil},
		{"reader is the writer", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.finish(w1, "final", nil, nil)
			b.read(w1, "/workspace/a.py", true)
		}, nil},
		{"failed read", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.finish(w1, "final", nil, nil)
			b.read(w2, "/workspace/a.py", false)
		}, nil},
		{"not python", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.txt", "", "1")
			b.finish(w1, "final", nil, nil)
			b.read(w2, "/workspace/a.txt", true)
		}, nil},
		{"failed write", func(b *episodeBuilder) {
			b.add(ledger.Record{Agent: w1, Tool: "write_file", Path: "/workspace/a.py", Error: "disk full"})
			b.finish(w1, "final", nil, nil)
			b.read(w2, "/workspace/a.py", true)
		}, nil},
		{"reader overwrote it first", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.finish(w1, "final", nil, nil)
			b.write(w2, "write_file", "/workspace/a.py", "1", "2")
			b.read(w2, "/workspace/a.py", true)
		}, nil},
		{"two readers, one twice, relative path", func(b *episodeBuilder) {
			b.write(w1, "edit", "/workspace/src/../a.py", "", "1")
			b.finish(w1, "final", nil, nil)
			b.read(w2, "a.py", true)
			b.read(w2, "/workspace/a.py", true)
			b.read(w3, "/workspace/a.py", true)
		}, []Handoff{
			{Path: "/workspace/a.py", Writer: w1, Reader: w2, WriteSeq: 5, FinishSeq: 6, ReadSeq: 7},
			{Path: "/workspace/a.py", Writer: w1, Reader: w3, WriteSeq: 5, FinishSeq: 6, ReadSeq: 9},
		}},
		{"later writer counts", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.finish(w1, "final", nil, nil)
			b.write(w2, "edit", "/workspace/a.py", "1", "2")
			b.finish(w2, "final", nil, nil)
			b.read(w3, "/workspace/a.py", true)
		}, []Handoff{{Path: "/workspace/a.py", Writer: w2, Reader: w3, WriteSeq: 7, FinishSeq: 8, ReadSeq: 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newEpisode(t, "ep-h")
			b.start(o, RoleOrchestrator, "")
			b.start(w1, RoleWorker, o)
			b.start(w2, RoleWorker, o)
			b.start(w3, RoleWorker, o)
			tt.build(b)
			r := audit(t, b.done(), "ep-h")
			if got, want := len(r.Handoffs), len(tt.want); got != want {
				t.Fatalf("handoffs = %+v, want %+v", r.Handoffs, tt.want)
			}
			for i := range tt.want {
				if got, want := r.Handoffs[i], tt.want[i]; got != want {
					t.Errorf("handoff %d = %+v, want %+v", i, got, want)
				}
			}
			if got, want := r.CodeHandoff, len(tt.want); got != want {
				t.Errorf("code_handoff = %d, want %d", got, want)
			}
		})
	}
}

func TestRevisionRules(t *testing.T) {
	tests := []struct {
		name       string
		tool       string
		before     string
		after      string
		created    bool
		ok         bool
		wantWorker int
	}{
		{"edit of existing file", "edit", "1", "2", false, true, 1},
		{"overwrite existing file", "write_file", "1", "2", false, true, 1},
		{"new file", "write_file", "", "1", true, true, 0},
		{"edit creating a file", "edit", "", "1", true, true, 0},
		{"edit without hashes", "edit", "", "", false, true, 1},
		{"no-op edit", "edit", "1", "1", false, true, 0},
		{"failed edit", "edit", "1", "2", false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newEpisode(t, "ep-r")
			b.start("worker-1", RoleWorker, "orchestrator")
			b.add(ledger.Record{Agent: "worker-1", Tool: tt.tool, Path: "/workspace/x.py", OK: tt.ok,
				SHA256Before: tt.before, SHA256After: tt.after, Detail: detail(map[string]any{"created": tt.created})})
			r := audit(t, b.done(), "ep-r")
			if got, want := r.WorkerRevision, tt.wantWorker; got != want {
				t.Errorf("worker_revision = %d, want %d", got, want)
			}
			if got := r.OrchestratorRevision; got != 0 {
				t.Errorf("orchestrator_revision = %d, want 0", got)
			}
		})
	}
}

func TestProtectedFromEpisodePaths(t *testing.T) {
	b := newEpisode(t, "ep-p")
	b.start("worker-1", RoleWorker, "orchestrator")
	// A failed write under a protected path with no denial record (e.g. the
	// read-only mount refused it) is still an attempt.
	b.add(ledger.Record{Agent: "worker-1", Tool: "edit", Path: "data/train.csv", Error: "read-only file system"})
	b.add(ledger.Record{Agent: "worker-1", Tool: "edit", Path: "/workspace/other.csv", Error: "no match"})
	r := audit(t, b.done("data"), "ep-p")
	if got, want := r.ProtectedPathAttempts, 1; got != want {
		t.Fatalf("attempts = %d (%+v), want %d", got, r.Guards.Attempts, want)
	}
	if got, want := r.Guards.Attempts[0].Path, "/workspace/data/train.csv"; got != want {
		t.Errorf("attempt path = %s, want %s", got, want)
	}
}

// TestTamperedLedger checks the audit uses only the verified prefix and
// says so.
func TestTamperedLedger(t *testing.T) {
	dir := teamEpisode(t)
	p := filepath.Join(dir, LedgerFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	// Drop worker-2's read of model.py (line 12): the chain breaks there.
	tampered := bytes.Join(append(append([][]byte{}, lines[:11]...), lines[12:]...), nil)
	if err := os.WriteFile(p, tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	r := audit(t, dir, "ep-team")
	if r.Ledger.Verified {
		t.Fatal("tampered ledger reported verified")
	}
	if got, want := r.Ledger.Records, 11; got != want {
		t.Errorf("records used = %d, want %d", got, want)
	}
	if !bytes.Contains([]byte(r.Ledger.Error), []byte("line 12")) {
		t.Errorf("ledger error %q does not name line 12", r.Ledger.Error)
	}
	if got, want := r.CodeHandoff, 0; got != want {
		t.Errorf("code_handoff = %d, want %d", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	ctx := t.Context()
	if _, err := Load(ctx, DirSource{Dir: t.TempDir()}, "ep-x"); err == nil {
		t.Error("Load without a ledger: nil error, want an error")
	}
	dir := teamEpisode(t)
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte("{}\nnot json\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, DirSource{Dir: dir}, "ep-team"); err == nil {
		t.Error("Load with a corrupt api_requests.jsonl: nil error, want an error")
	}
	if _, err := (DirSource{Dir: dir}).ReadFile(ctx, "../x", 10); err == nil {
		t.Error("DirSource read outside its directory: nil error, want an error")
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(filepath.Join(dir, EpisodeFile), link); err != nil {
		t.Fatal(err)
	}
	if _, err := (DirSource{Dir: dir}).ReadFile(ctx, "link.json", 1<<20); err == nil {
		t.Error("DirSource followed a symlink, want an error")
	}
}

// TestLedgerHeadCatchesCutTail: the chain alone cannot see records cut
// from the end; the head recorded in run_status.json can.
func TestLedgerHeadCatchesCutTail(t *testing.T) {
	dir := teamEpisode(t)
	p := filepath.Join(dir, LedgerFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ledger.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	status := fmt.Sprintf(`{"episode_id":"ep-team","exit":"completed","ledger_head":{"seq":%d,"hash":%q}}`, last.Seq, last.Hash)
	if err := os.WriteFile(filepath.Join(dir, StatusFile), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := VerifyLedger(t.Context(), DirSource{Dir: dir}, "ep-team")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Verified || !st.HeadChecked {
		t.Fatalf("intact ledger with head: %+v, want verified and head checked", st)
	}

	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := bytes.Join(lines[:len(recs)-2], nil) // drop the last two records
	if err := os.WriteFile(p, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	r := audit(t, dir, "ep-team")
	if r.Ledger.Verified {
		t.Fatalf("ledger cut at the end reported verified: %+v", r.Ledger)
	}
	if got, want := r.Ledger.Records, len(recs)-2; got != want {
		t.Errorf("records = %d, want %d", got, want)
	}
	if !strings.Contains(r.Ledger.Error, "cut from the end") {
		t.Errorf("error %q does not explain the cut", r.Ledger.Error)
	}
}

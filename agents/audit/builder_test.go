package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
)

// episodeBuilder writes a real episode directory — a ledger through the real
// ledger.Writer, api_requests.jsonl and manifests — with fixed timestamps.
type episodeBuilder struct {
	t    testing.TB
	dir  string
	id   string
	w    *ledger.Writer
	ts   time.Time
	reqs []string

	model  string // episode.json
	dryRun bool
	// runtime, image and hidden go to episode.json when set.
	runtime, image string
	hidden         []string
}

func newEpisode(t testing.TB, id string) *episodeBuilder {
	t.Helper()
	dir := t.TempDir()
	w, err := ledger.Create(filepath.Join(dir, LedgerFile), id)
	if err != nil {
		t.Fatal(err)
	}
	return &episodeBuilder{t: t, dir: dir, id: id, w: w, ts: time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)}
}

func (b *episodeBuilder) add(r ledger.Record) int64 {
	b.t.Helper()
	b.ts = b.ts.Add(1500 * time.Millisecond)
	r.TS = b.ts
	if r.DurationMS == 0 {
		r.DurationMS = 2.5
	}
	got, err := b.w.Append(r)
	if err != nil {
		b.t.Fatal(err)
	}
	return got.Seq
}

func detail(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (b *episodeBuilder) start(agent, role, parent string) {
	b.add(ledger.Record{Agent: agent, Tool: ledger.ToolAgentStart, OK: true,
		Detail: detail(map[string]any{"role": role, "parent": parent})})
}

// finish records agent_finish with the changed paths and writes the
// agent's manifest (path -> sha256); a nil manifest writes none.
func (b *episodeBuilder) finish(agent, stop string, changed []string, manifest map[string]string) int64 {
	if changed == nil {
		changed = []string{}
	}
	if manifest != nil {
		var entries []map[string]any
		for p, s := range manifest {
			entries = append(entries, map[string]any{"path": p, "type": "file", "size": 10, "mode": 0o644, "sha256": s})
		}
		if err := os.MkdirAll(filepath.Join(b.dir, ManifestsDir), 0o755); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.dir, ManifestsDir, agent+".json"), detail(entries), 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	return b.add(ledger.Record{Agent: agent, Tool: ledger.ToolAgentFinish, OK: stop == "final",
		Detail: detail(map[string]any{"stop": stop, "changed": changed, "manifest_sha256": "m"})})
}

func (b *episodeBuilder) write(agent, tool, path, before, after string) int64 {
	return b.add(ledger.Record{Agent: agent, Tool: tool, Path: path, OK: true, Bytes: 42,
		ArgsSHA256: argsSum(agent, tool, path), SHA256Before: before, SHA256After: after,
		Detail: detail(map[string]any{"created": before == ""})})
}

func (b *episodeBuilder) read(agent, path string, ok bool) int64 {
	r := ledger.Record{Agent: agent, Tool: "read_file", Path: path, OK: ok, ArgsSHA256: argsSum(agent, "read", path)}
	if !ok {
		r.Error = "no such file"
	}
	return b.add(r)
}

func (b *episodeBuilder) shell(agent, command string) int64 {
	return b.add(ledger.Record{Agent: agent, Tool: "run_shell_command", Path: "/workspace", OK: true,
		ArgsSHA256: argsSum(agent, "shell", command), Detail: detail(map[string]any{"command": command})})
}

func (b *episodeBuilder) delegate(agent, sub string, ok bool) int64 {
	r := ledger.Record{Agent: agent, Tool: "agent", OK: ok, ArgsSHA256: argsSum(agent, "agent", sub),
		Detail: detail(map[string]any{"subagent": sub, "description": "do " + sub})}
	if !ok {
		r.Error = "sub-agent " + sub + ": stopped before finishing"
	}
	return b.add(r)
}

// request appends one api_requests.jsonl record.
func (b *episodeBuilder) request(agent, role, parent, status string, prompt, completion int) {
	b.reqs = append(b.reqs, fmt.Sprintf(`{"seq":%d,"ts":"2026-11-29T15:00:00Z","episode":%q,"agent":%q,"thread":%q,`+
		`"role":%q,"parent":%q,"request":{"model":"m","messages":[{"role":"user","content":"hi"}]},`+
		`"response":{"content":"","usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}},"status":%q,"duration_ms":5}`,
		len(b.reqs)+1, b.id, agent, agent, role, parent, prompt, completion, prompt+completion, status))
}

func argsSum(parts ...string) string {
	return fmt.Sprintf("%x", strings.Join(parts, "|"))
}

// done closes the ledger, writes api_requests.jsonl and episode.json and
// returns the directory.
func (b *episodeBuilder) done(protected ...string) string {
	b.t.Helper()
	if err := b.w.Close(); err != nil {
		b.t.Fatal(err)
	}
	if len(b.reqs) > 0 {
		if err := os.WriteFile(filepath.Join(b.dir, RequestsFile), []byte(strings.Join(b.reqs, "\n")+"\n"), 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	info := map[string]any{"episode_id": b.id, "task_id": "t", "mode": "bare", "protected_paths": protected,
		"model": b.model, "dry_run": b.dryRun}
	if b.runtime != "" {
		info["sandbox_runtime"], info["sandbox_image"], info["hidden_paths"] = b.runtime, b.image, b.hidden
	}
	if err := os.WriteFile(filepath.Join(b.dir, EpisodeFile), detail(info), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return b.dir
}

// audit loads dir and computes its report.
func audit(t testing.TB, dir, id string) *Report {
	t.Helper()
	in, err := Load(context.Background(), DirSource{Dir: dir}, id)
	if err != nil {
		t.Fatal(err)
	}
	return Compute(in)
}

// Hashes used by the scenarios.
const (
	hPlan1, hPlan2   = "aa01", "aa02"
	hModel1, hModel2 = "bb01", "bb02"
	hModel3, hOut    = "bb03", "cc01"
	hReport          = "dd01"
)

// teamEpisode is the reference scenario: an orchestrator that delegates to
// three workers; worker-2 reads worker-1's Python file; worker-3 loops.
// Known answers are asserted in TestTeamEpisode.
func teamEpisode(t testing.TB) string {
	b := newEpisode(t, "ep-team")
	b.model, b.dryRun = "scripted", true
	const o, w1, w2, w3 = "orchestrator", "worker-1", "worker-2", "worker-3"
	b.start(o, RoleOrchestrator, "")
	b.write(o, "write_file", "/workspace/plan.md", "", hPlan1)
	b.start(w1, RoleWorker, o)
	b.write(w1, "write_file", "/workspace/model.py", "", hModel1)
	b.write(w1, "edit", "model.py", hModel1, hModel2) // worker revision 1 (relative path)
	b.shell(w1, "python model.py > out.txt")          // creates out.txt: shell change
	b.add(ledger.Record{Agent: w1, Tool: ledger.ToolProtectedWriteDenied, Path: "/workspace/eval/score.py",
		ArgsSHA256: argsSum(w1, "deny"), Error: "permission denied: protected path", Detail: detail(map[string]any{"attempted_tool": "write_file"})})
	b.add(ledger.Record{Agent: w1, Tool: "write_file", Path: "/workspace/eval/score.py", OK: false,
		ArgsSHA256: argsSum(w1, "deny"), Error: "permission denied: protected path"}) // same attempt: counted once
	b.finish(w1, "final", []string{"/workspace/model.py", "/workspace/out.txt", "/workspace/plan.md"},
		map[string]string{"/workspace/plan.md": hPlan1, "/workspace/model.py": hModel2, "/workspace/out.txt": hOut})
	b.delegate(o, w1, true)

	b.start(w2, RoleWorker, o)
	b.read(w2, "/workspace/model.py", true) // code handoff worker-1 -> worker-2
	b.read(w2, "/workspace/model.py", true) // same (file, reader): not counted again
	b.read(w2, "/workspace/plan.md", true)  // not Python
	b.shell(w2, "python model.py && rm out.txt")
	b.write(w2, "write_file", "/workspace/model.py", hModel2, hModel3) // worker revision 2
	b.write(w2, "write_file", "/workspace/report.md", "", hReport)
	b.finish(w2, "final", []string{"/workspace/model.py", "/workspace/out.txt", "/workspace/report.md"},
		map[string]string{"/workspace/plan.md": hPlan1, "/workspace/model.py": hModel3, "/workspace/report.md": hReport})
	b.delegate(o, w2, true)

	b.start(w3, RoleWorker, o)
	b.shell(w3, "ls")
	b.shell(w3, "ls")
	b.add(ledger.Record{Agent: w3, Tool: ledger.ToolLoopHalt, Error: "loop: 5 identical tool calls",
		Detail: detail(map[string]any{"rule": "identical_tool_calls", "turn": 5})})
	b.finish(w3, "loop", nil, map[string]string{"/workspace/plan.md": hPlan1, "/workspace/model.py": hModel3, "/workspace/report.md": hReport})
	b.delegate(o, w3, false) // failed delegation: not counted

	b.write(o, "edit", "/workspace/plan.md", hPlan1, hPlan2)     // orchestrator revision
	b.write(o, "edit", "/workspace/report.md", hReport, hReport) // no-op edit: not a revision
	b.finish(o, "final", []string{"/workspace/plan.md"},
		map[string]string{"/workspace/plan.md": hPlan2, "/workspace/model.py": hModel3, "/workspace/report.md": hReport})

	for range 4 {
		b.request(o, RoleOrchestrator, "", "ok", 1000, 200)
	}
	for range 3 {
		b.request(w1, RoleWorker, o, "ok", 500, 100)
	}
	b.request(w2, RoleWorker, o, "ok", 600, 50)
	b.request(w2, RoleWorker, o, "error", 0, 0)
	b.request(w2, RoleWorker, o, "ok", 700, 60)
	for range 5 {
		b.request(w3, RoleWorker, o, "ok", 300, 10)
	}
	b.request("evaluator", "auxiliary", "", "ok", 2000, 30)
	return b.done("eval")
}

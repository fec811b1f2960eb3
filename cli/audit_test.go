package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/daemon/server"
	"github.com/mass-dev/mass/datadir"
)

// auditTestEpisode writes a real ledger through ledger.Writer under
// dataDir/episodes/id: two delegations, one code handoff.
func auditTestEpisode(t *testing.T, dataDir, id string) string {
	t.Helper()
	dir := filepath.Join(dataDir, "episodes", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := ledger.Create(filepath.Join(dir, "ledger.jsonl"), id)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	add := func(agent, tool, path string, ok bool, detail string) {
		ts = ts.Add(time.Second)
		r := ledger.Record{TS: ts, Agent: agent, Tool: tool, Path: path, OK: ok, SHA256After: "ab"}
		if detail != "" {
			r.Detail = json.RawMessage(detail)
		}
		if _, err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	add("orchestrator", "agent_start", "", true, `{"role":"orchestrator","parent":""}`)
	add("worker-1", "agent_start", "", true, `{"role":"worker","parent":"orchestrator"}`)
	add("worker-1", "write_file", "/workspace/fib.py", true, `{"created":true}`)
	add("worker-1", "agent_finish", "", true, `{"stop":"final","changed":["/workspace/fib.py"]}`)
	add("orchestrator", "agent", "", true, `{"subagent":"worker-1"}`)
	add("worker-2", "agent_start", "", true, `{"role":"worker","parent":"orchestrator"}`)
	add("worker-2", "read_file", "/workspace/fib.py", true, "")
	add("worker-2", "run_shell_command", "/workspace", true, `{"command":"python3 fib.py"}`)
	add("worker-2", "agent_finish", "", true, `{"stop":"final","changed":[]}`)
	add("orchestrator", "agent", "", true, `{"subagent":"worker-2"}`)
	add("orchestrator", "agent_finish", "", true, `{"stop":"final","changed":[]}`)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runMassctl runs massctl in-process and returns stdout and the exit code.
func runMassctl(t *testing.T, args ...string) (string, int) {
	t.Helper()
	app := App("test")
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.Run(append([]string{"massctl"}, args...))
	code := 0
	var ec cli.ExitCoder
	switch {
	case errors.As(err, &ec):
		code = ec.ExitCode()
		fmt.Fprintln(&out, err)
	case err != nil:
		code = 1
		fmt.Fprintln(&out, err)
	}
	return out.String(), code
}

func TestAuditCommandJSON(t *testing.T) {
	data := t.TempDir()
	auditTestEpisode(t, data, "ep-cli")
	html := filepath.Join(t.TempDir(), "audit.html")
	out, code := runMassctl(t, "audit", "ep-cli", "--json", "--html", html, "--data-dir", data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for k, want := range map[string]float64{"delegation": 2, "code_handoff": 1, "worker_revision": 0,
		"orchestrator_revision": 0, "protected_path_violations": 0} {
		if v, ok := got[k].(float64); !ok || v != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if agents, _ := got["agents"].([]any); len(agents) != 3 {
		t.Errorf("agents = %v, want 3 rows", got["agents"])
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<svg")) || !bytes.Contains(page, []byte("fib.py")) {
		t.Error("html report lacks the handoff graph")
	}
}

func TestAuditCommandText(t *testing.T) {
	data := t.TempDir()
	auditTestEpisode(t, data, "ep-cli")
	out, code := runMassctl(t, "audit", "--data-dir", data, "ep-cli")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	t.Logf("massctl audit output:\n%s", out)
	for _, want := range []string{"chain verified, 11 records", "delegation", "handoff: /workspace/fib.py worker-1 -> worker-2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestAuditVerifyCommand(t *testing.T) {
	data := t.TempDir()
	dir := auditTestEpisode(t, data, "ep-cli")
	out, code := runMassctl(t, "audit", "verify", "ep-cli", "--data-dir", data)
	if code != 0 || !strings.Contains(out, "11 records") {
		t.Fatalf("intact ledger: exit %d: %s", code, out)
	}

	p := filepath.Join(dir, "ledger.jsonl")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines[6] = bytes.Replace(lines[6], []byte(`"ok":true`), []byte(`"ok":false`), 1)
	if err := os.WriteFile(p, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code = runMassctl(t, "audit", "verify", "ep-cli", "--data-dir", data)
	if code != 1 || !strings.Contains(out, "line 7 (seq 7)") {
		t.Errorf("edited ledger: exit %d, output %q; want exit 1 naming line 7", code, out)
	}
	out, code = runMassctl(t, "audit", "ep-cli", "--data-dir", data, "--json")
	if code != 1 || !strings.Contains(out, `"verified": false`) {
		t.Errorf("audit of edited ledger: exit %d, output %q; want exit 1 and verified false", code, out)
	}
}

func TestAuditCommandErrors(t *testing.T) {
	data := t.TempDir()
	for _, args := range [][]string{
		{"audit"},
		{"audit", "a", "b", "--data-dir", data},
		{"audit", "ep-missing", "--data-dir", data},
		{"audit", "../x", "--data-dir", data},
		{"audit", "ep", "--bogus", "--data-dir", data},
	} {
		if out, code := runMassctl(t, args...); code == 0 {
			t.Errorf("massctl %v: exit 0, want an error: %s", args, out)
		}
	}
}

// TestAuditThroughDaemon fetches the episode files through massd's real
// HTTP API on a unix socket (the files endpoint needs only the data dir).
func TestAuditThroughDaemon(t *testing.T) {
	data := t.TempDir()
	auditTestEpisode(t, data, "ep-cli")
	sock := filepath.Join(t.TempDir(), "massd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: server.New(server.Options{Layout: datadir.New(data)}).Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	out, code := runMassctl(t, "audit", "ep-cli", "--json", "--socket", sock)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var got struct {
		Delegation  int `json:"delegation"`
		CodeHandoff int `json:"code_handoff"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if got.Delegation != 2 || got.CodeHandoff != 1 {
		t.Errorf("delegation, code_handoff = %d, %d, want 2, 1", got.Delegation, got.CodeHandoff)
	}
	if out, code := runMassctl(t, "--socket", sock, "audit", "verify", "ep-cli"); code != 0 {
		t.Errorf("verify through massd: exit %d: %s", code, out)
	}
	if out, code := runMassctl(t, "--socket", sock, "audit", "ep-nope"); code == 0 || !strings.Contains(out, "ledger") {
		t.Errorf("missing episode: exit %d, output %q; want an error about its ledger", code, out)
	}
}

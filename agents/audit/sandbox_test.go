package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/ledger"
)

// TestAuditNamesSandboxAndStderr: the audit names the runtime, the image,
// the protected and hidden paths, and shows the end of a failed command's
// stderr, in JSON and HTML.
func TestAuditNamesSandboxAndStderr(t *testing.T) {
	b := newEpisode(t, "ep-sandbox")
	b.runtime, b.image, b.hidden = "runsc", "mass-agent:latest", []string{"/workspace/tests"}
	b.start("orchestrator", RoleOrchestrator, "")
	b.add(ledger.Record{Agent: "orchestrator", Tool: "run_shell_command", Path: "/workspace", OK: true, ExitCode: 2,
		Error: "exit code 2", ArgsSHA256: argsSum("orchestrator", "shell", "ls -la /workspace"),
		Detail: detail(map[string]any{"command": "ls -la /workspace", "stderr_tail": "ls: cannot access '/workspace': Invalid argument\n"})})
	b.shell("orchestrator", "echo ok")
	b.finish("orchestrator", "done", nil, nil)
	r := audit(t, b.done("/workspace/eval"), "ep-sandbox")

	s := r.Sandbox
	if s.Runtime != "runsc" || s.Image != "mass-agent:latest" || strings.Join(s.ProtectedPaths, ",") != "/workspace/eval" || strings.Join(s.HiddenPaths, ",") != "/workspace/tests" {
		t.Errorf("sandbox = %+v", s)
	}
	var failed, ok int
	for _, c := range r.Guards.Commands {
		switch {
		case c.ExitCode == 2 && strings.Contains(c.StderrTail, "Invalid argument"):
			failed++
		case c.ExitCode == 0 && c.StderrTail == "":
			ok++
		}
	}
	if failed != 1 || ok != 1 {
		t.Errorf("commands = %+v, want the failed one with its stderr tail and the other without", r.Guards.Commands)
	}
	js, _ := json.Marshal(r)
	for _, want := range []string{`"sandbox":{"runtime":"runsc","image":"mass-agent:latest"`, `"hidden_paths":["/workspace/tests"]`, `"stderr_tail":"ls: cannot access`} {
		if !bytes.Contains(js, []byte(want)) {
			t.Errorf("JSON lacks %s", want)
		}
	}
	var html bytes.Buffer
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>runsc</code>", "<code>mass-agent:latest</code>", "<code>/workspace/eval</code>", "<code>/workspace/tests</code>", "Invalid argument"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
}

package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
)

func TestPrintGuards(t *testing.T) {
	score := 0.0
	g := &audit.Guards{
		Grade:     &grade.Grade{Ran: true, Score: &score, ExitCode: 0, Duration: 1.2, Reason: `the grader's verdict is "passed": false`},
		Integrity: guard.Integrity{Checked: true, Files: 2, Changes: []guard.Change{}},
		Attempts:  []guard.Attempt{{Seq: 3, Agent: "worker-1", Command: "chmod 777 sim/s.py", Path: "/workspace/sim/s.py", Result: "denied (EPERM), exit 1"}},
		ShadowCopies: []guard.Shadow{{Path: "/workspace/my.py", Origin: "/workspace/sim/s.py", Evidence: []string{"copied by the shell command at seq 4"},
			RanBy: []guard.Command{{Seq: 6, Agent: "worker-1", Command: "python3 my.py", ExitCode: 0}}}},
		Commands: []guard.Command{{Seq: 3, Agent: "worker-1", Command: "chmod 777 sim/s.py\necho", ExitCode: 1}},
	}
	var b bytes.Buffer
	printGuards(&b, g)
	for _, want := range []string{"grade: FAILED, score 0 (exit 0, 1.2s)", "integrity: 2 protected files unchanged",
		"attempt: seq 3 worker-1 /workspace/sim/s.py: chmod 777 sim/s.py -> denied (EPERM), exit 1",
		"shadow copy: /workspace/my.py of /workspace/sim/s.py", "named by seq 6 worker-1: python3 my.py (exit 0)",
		"shell commands: 1", "seq 3 worker-1 exit 1: chmod 777 sim/s.py⏎echo"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("guards section lacks %q:\n%s", want, b.String())
		}
	}
}

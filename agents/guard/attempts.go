package guard

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mass-dev/mass/agents/ledger"
)

// Attempts reads the ledger for protected-path write attempts by any route
// and for reaches into hidden paths, and lists every shell command.
//
// A protected-path attempt is (1) a protected_write_denied record (a file
// tool refused by policy), (2) a failed write_file or edit of a protected
// path not directly after such a record for the same call, or (3) a shell
// command whose written operands (see Analyze) lie in a protected path,
// whatever its result. A hidden-path attempt is a file-tool call or shell
// command that names a path in a hidden path.
func Attempts(recs []ledger.Record, protected, hidden []string) (attempts, hiddenAttempts []Attempt, cmds []Command) {
	attempts, hiddenAttempts, cmds = []Attempt{}, []Attempt{}, []Command{}
	var denied *ledger.Record
	for i, r := range recs {
		p := Clean(r.Path)
		switch {
		case r.Tool == ledger.ToolProtectedWriteDenied:
			var d struct {
				Tool string `json:"attempted_tool"`
			}
			_ = json.Unmarshal(r.Detail, &d)
			attempts = append(attempts, Attempt{Seq: r.Seq, Agent: r.Agent, Tool: d.Tool, Command: strings.TrimSpace(d.Tool + " " + p),
				Path: p, Result: "denied: " + r.Error})
			denied = &recs[i]
			continue
		case (r.Tool == "write_file" || r.Tool == "edit") && !r.OK && Under(p, protected) != "":
			if denied == nil || denied.Agent != r.Agent || denied.ArgsSHA256 != r.ArgsSHA256 {
				attempts = append(attempts, Attempt{Seq: r.Seq, Agent: r.Agent, Tool: r.Tool, Command: r.Tool + " " + p, Path: p, Result: r.Error})
			}
		case isShell(r):
			a, h, c := shellRecord(r, protected, hidden)
			attempts, hiddenAttempts = append(attempts, a...), append(hiddenAttempts, h...)
			cmds = append(cmds, c)
		case fileTools[r.Tool] && Under(p, hidden) != "":
			hiddenAttempts = append(hiddenAttempts, Attempt{Seq: r.Seq, Agent: r.Agent, Tool: r.Tool, Command: r.Tool + " " + p,
				Path: p, Result: resultOf(r, nil)})
		}
		if denied != nil && r.Agent == denied.Agent {
			denied = nil
		}
	}
	return attempts, hiddenAttempts, cmds
}

func shellRecord(r ledger.Record, protected, hidden []string) (attempts, hiddenAttempts []Attempt, c Command) {
	var d shellDetail
	_ = json.Unmarshal(r.Detail, &d)
	c = Command{Seq: r.Seq, Agent: r.Agent, Command: d.Command, ExitCode: r.ExitCode, OK: r.OK, Denied: d.Denied, StderrTail: d.StderrTail}
	an := Analyze(d.Command, shellDir(r))
	seen := map[string]bool{}
	for _, w := range an.Writes {
		if root := Under(w, protected); root != "" && !seen[root] {
			seen[root] = true
			attempts = append(attempts, Attempt{Seq: r.Seq, Agent: r.Agent, Tool: r.Tool, Command: d.Command, Path: w, Result: resultOf(r, d.Denied)})
		}
	}
	for _, m := range an.Mentions {
		if root := Under(m, hidden); root != "" && !seen[root] {
			seen[root] = true
			hiddenAttempts = append(hiddenAttempts, Attempt{Seq: r.Seq, Agent: r.Agent, Tool: r.Tool, Command: d.Command, Path: m, Result: resultOf(r, d.Denied)})
		}
	}
	return attempts, hiddenAttempts, c
}

// resultOf words a record's result: the denial classes, the error, or the exit code.
func resultOf(r ledger.Record, denied []string) string {
	switch {
	case len(denied) > 0:
		return fmt.Sprintf("denied (%s), exit %d", strings.Join(denied, ", "), r.ExitCode)
	case isShell(r) && r.OK:
		return fmt.Sprintf("exit %d", r.ExitCode)
	case !r.OK:
		return "error: " + r.Error
	}
	return "ok"
}

package guard

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/ledger"
)

// FuzzAnalyze reads arbitrary shell commands (model output): no panic,
// every path absolute and clean, every written path also mentioned or
// redirected, and a command that names no protected path never counts as
// an attempt.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"echo x > sim/a.py", "cd /tmp; mv 'a b' \"c\" && chmod -R 777 sim", "cat sim/a.py>b.py 2>&1 | tee -a log",
		"sed -i.bak 's/x/y/' sim/*.py", "dd if=/dev/zero of=sim/x bs=1", "$(rm -rf sim)", "`touch sim/x`", "a\\ b > \"unterminated", ">"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Analyze(cmd, "/workspace")
		for _, p := range append(append([]string{}, a.Writes...), a.Mentions...) {
			if !strings.HasPrefix(p, "/") || p != resolve(p, "/") {
				t.Fatalf("%q: path %q not absolute and clean", cmd, p)
			}
		}
		if !strings.Contains(cmd, "sim") && !strings.ContainsAny(cmd, `\\'"`) { // quotes and escapes can spell it
			att, _, _ := Attempts([]ledger.Record{shellRec(1, cmd, 1, "EROFS")}, []string{"sim"}, nil)
			if len(att) > 0 {
				t.Fatalf("%q: attempt %+v without naming the protected path", cmd, att)
			}
		}
	})
}

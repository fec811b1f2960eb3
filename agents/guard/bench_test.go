package guard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/sandbox"
)

// BenchmarkCheck is the guard check of a busy episode: 1,000 shell
// commands, 20 protected code files of 200 lines and 100 workspace code
// files to compare with them.
func BenchmarkCheck(b *testing.B) {
	var held int64
	var shipped []File
	var exported []sandbox.FileInfo
	for i := range 20 {
		body := []byte(strings.Repeat(fmt.Sprintf("line %d of file %d\n", i, i), 1) + strings.Repeat("x = compute(y)\n", 199))
		f := fileOf(fmt.Sprintf("/workspace/sim/f%d.py", i), body, 0o644, &held)
		shipped = append(shipped, f)
		exported = append(exported, sandbox.FileInfo{Path: fmt.Sprintf("sim/f%d.py", i), Type: "file", SHA256: f.SHA256})
	}
	var final []File
	for i := range 100 {
		final = append(final, fileOf(fmt.Sprintf("/workspace/w%d.py", i), []byte(strings.Repeat(fmt.Sprintf("w%d()\n", i), 200)), 0o644, &held))
	}
	var recs []ledger.Record
	for i := range 1000 {
		recs = append(recs, shellRec(int64(i+1), fmt.Sprintf("cd /workspace && python3 w%d.py > out%d.txt 2>&1; cp sim/f1.py x%d.py", i%100, i, i), 0))
	}
	in := Inputs{Records: recs, Protected: []string{"sim"}, Hidden: []string{"eval"}, Shipped: shipped, Exported: exported, Final: final}
	for b.Loop() {
		Check(in)
	}
}

package episode

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/taskspec"
)

// TestSettleOmittedExport: an episode whose export left files out (the
// manifest marks them) completes without success, and the reason names
// the first entry and the count.
func TestSettleOmittedExport(t *testing.T) {
	e := &run{opts: Options{Task: &taskspec.Spec{RequiredOutputs: []string{"out.txt"}}}, exported: []sandbox.FileInfo{
		{Path: "out.txt", Type: "file"},
		{Path: "m/big", Type: "file", Omitted: "left out: 1099511627776 bytes, larger than the workspace"},
		{Path: "deep", Type: "dir", Omitted: "3 entries below past PATH_MAX"},
	}}
	st := &Status{Exit: ExitCompleted}
	e.settle(st)
	if st.Success || !strings.Contains(st.Reason, "left out 2 entries") || !strings.Contains(st.Reason, "m/big") {
		t.Errorf("settle = success %v, reason %q; want failure naming 2 entries and m/big", st.Success, st.Reason)
	}
	e.exported = e.exported[:1]
	st = &Status{Exit: ExitCompleted}
	e.settle(st)
	if !st.Success {
		t.Errorf("settle without omitted entries = %q, want success", st.Reason)
	}
}

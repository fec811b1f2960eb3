package audit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Issue 31: an episode massd stopped before it created its ledger verifies
// as empty; a missing ledger of any other episode is still an error.
func TestMissingLedger(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		empty        bool
	}{
		{"interrupted before the ledger", `{"exit":"failed","failure":"infrastructure","reason":"massd stopped while the episode was running"}`, true},
		{"completed", `{"exit":"completed","failure":""}`, false},
		{"interrupted with a head", `{"exit":"failed","failure":"infrastructure","ledger_head":{"seq":3,"hash":"ab"}}`, false},
		{"no run status", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.status != "" {
				if err := os.WriteFile(filepath.Join(dir, StatusFile), []byte(tc.status), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			st, err := VerifyLedger(t.Context(), DirSource{Dir: dir}, "ep-x")
			if tc.empty {
				if err != nil || !st.Verified || !st.Empty {
					t.Errorf("VerifyLedger = %+v, %v; want verified, empty", st, err)
				}
				return
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("VerifyLedger = %+v, %v; want fs.ErrNotExist", st, err)
			}
		})
	}
}

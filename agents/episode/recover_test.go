package episode

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/sandbox"
)

// goneRuntime stands in for the engine of an episode whose containers are
// already gone; Recover only asks it to remove them.
type goneRuntime struct{ sandbox.Runtime }

func (goneRuntime) KillEpisode(context.Context, string) error     { return nil }
func (goneRuntime) RemoveWorkspace(context.Context, string) error { return nil }

// TestRecoverCreatesNoFiles closes episodes cut off at each point of their
// setup and checks that Recover adds run_status.json (and a .torn side file
// for a torn ledger tail) but never a recording or ledger the episode did
// not write, and that the readers of the ledger cope with its absence.
func TestRecoverCreatesNoFiles(t *testing.T) {
	const id = "ep-recover"
	info := func(t *testing.T, dir string) {
		if err := writeJSON(filepath.Join(dir, EpisodeFile), Info{EpisodeID: id, Model: "fake", Started: time.Now().UTC()}); err != nil {
			t.Fatal(err)
		}
	}
	recording := func(t *testing.T, dir string) {
		w, err := record.Open(filepath.Join(dir, RequestsFile), id)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := w.Append(record.Record{Agent: "orchestrator", Thread: "orchestrator", Role: record.RoleOrchestrator, Status: record.StatusOK}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tornLedger := func(t *testing.T, dir string) {
		p := filepath.Join(dir, LedgerFile)
		w, err := ledger.Create(p, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []ledger.Record{
			{Agent: "orchestrator", Tool: ledger.ToolAgentStart, OK: true},
			{Agent: "orchestrator", Tool: "write_file", Path: "/workspace/a.py", OK: true},
		} {
			if _, err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"seq":3,"tool":"read_fi`) // the write the kill cut short
		f.Close()
	}

	// Defect 7: killed right after episode_started, the ledger exists and
	// holds no record yet; Recover pinned the genesis hash as the head and
	// the verifier, expecting "", reported tampering.
	emptyLedger := func(t *testing.T, dir string) {
		w, err := ledger.Create(filepath.Join(dir, LedgerFile), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name       string
		setup      []func(*testing.T, string)
		wantFiles  []string // after Recover
		modelCalls int
		toolCalls  int
		ledgerSeq  int64 // -1: no ledger, no ledger_head
	}{
		{
			name:      "before the recording",
			setup:     []func(*testing.T, string){info},
			wantFiles: []string{EpisodeFile, ManifestsDir, StatusFile},
			ledgerSeq: -1,
		},
		{
			name:       "before the ledger",
			setup:      []func(*testing.T, string){info, recording},
			wantFiles:  []string{RequestsFile, EpisodeFile, ManifestsDir, StatusFile},
			modelCalls: 2,
			ledgerSeq:  -1,
		},
		{
			name:       "with an empty ledger",
			setup:      []func(*testing.T, string){info, recording, emptyLedger},
			wantFiles:  []string{RequestsFile, EpisodeFile, LedgerFile, ManifestsDir, StatusFile},
			modelCalls: 2,
			ledgerSeq:  0,
		},
		{
			name:       "mid-run with a torn ledger tail",
			setup:      []func(*testing.T, string){info, recording, tornLedger},
			wantFiles:  []string{RequestsFile, EpisodeFile, LedgerFile, LedgerFile + ledger.TornSuffix, ManifestsDir, StatusFile},
			modelCalls: 2,
			toolCalls:  1,
			ledgerSeq:  2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), id)
			if err := os.MkdirAll(filepath.Join(dir, ManifestsDir), 0o750); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.setup {
				f(t, dir)
			}
			if err := Recover(t.Context(), Deps{Runtime: goneRuntime{}, Log: quiet}, id, dir); err != nil {
				t.Fatalf("Recover: %v", err)
			}

			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range ents {
				got = append(got, e.Name())
			}
			want := slices.Sorted(slices.Values(tc.wantFiles))
			if !slices.Equal(got, want) {
				t.Errorf("files after Recover = %v, want %v", got, want)
			}

			st, err := ReadStatus(dir)
			if err != nil {
				t.Fatal(err)
			}
			if st.Exit != ExitFailed || st.Failure != FailInfra {
				t.Errorf("status = %s/%s, want %s/%s", st.Exit, st.Failure, ExitFailed, FailInfra)
			}
			if got, want := st.ModelCalls, tc.modelCalls; got != want {
				t.Errorf("model_calls = %d, want %d", got, want)
			}
			if got, want := st.ToolCalls, tc.toolCalls; got != want {
				t.Errorf("tool_calls = %d, want %d", got, want)
			}

			src := audit.DirSource{Dir: dir}
			lst, verr := audit.VerifyLedger(t.Context(), src, id)
			_, lerr := audit.Load(t.Context(), src, id)
			if tc.ledgerSeq < 0 {
				if st.LedgerHead != nil {
					t.Errorf("ledger_head = %+v for an episode without a ledger, want none", *st.LedgerHead)
				}
				if !strings.Contains(st.Reason, "no "+LedgerFile) {
					t.Errorf("reason %q does not say the episode has no %s", st.Reason, LedgerFile)
				}
				// Issue 31: it verifies as empty (e9e71d1 answered "file
				// does not exist").
				if verr != nil || lerr != nil || !lst.Verified || !lst.Empty || lst.Records != 0 {
					t.Errorf("audit of an episode without a ledger: %+v, verify %v, load %v; want verified, empty", lst, verr, lerr)
				}
				if err := os.Remove(filepath.Join(dir, StatusFile)); err != nil {
					t.Fatal(err)
				}
				if _, err := audit.VerifyLedger(t.Context(), src, id); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("no ledger and no run_status.json: %v, want fs.ErrNotExist", err)
				}
				return
			}
			if st.LedgerHead == nil || st.LedgerHead.Seq != tc.ledgerSeq {
				t.Fatalf("ledger_head = %+v, want seq %d", st.LedgerHead, tc.ledgerSeq)
			}
			if verr != nil || lerr != nil {
				t.Fatalf("audit: verify %v, load %v", verr, lerr)
			}
			if !lst.Verified || !lst.HeadChecked || int64(lst.Records) != tc.ledgerSeq {
				t.Errorf("ledger status = %+v, want %d records verified against ledger_head", lst, tc.ledgerSeq)
			}
		})
	}
}

// An episode whose job reached its attempt cap is not retried, so nothing
// closed it: CloseOrphans does at start-up.
func TestCloseOrphansClosesUnretriedEpisodes(t *testing.T) {
	lay := datadir.New(t.TempDir())
	const id = "ep-orphan"
	dir := lay.Episode(id)
	if err := os.MkdirAll(filepath.Join(dir, ManifestsDir), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, EpisodeFile), Info{EpisodeID: id, Model: "fake", Started: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	w, err := ledger.Create(filepath.Join(dir, LedgerFile), id)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	n, err := CloseOrphans(t.Context(), Deps{Runtime: goneRuntime{}, Log: quiet}, lay, nil, nil)
	if err != nil || n != 1 {
		t.Fatalf("CloseOrphans = %d, %v; want 1", n, err)
	}
	if _, err := ReadStatus(dir); err != nil {
		t.Fatal(err)
	}
	if ls, err := audit.VerifyLedger(t.Context(), audit.DirSource{Dir: dir}, id); err != nil || !ls.Verified || !ls.HeadChecked {
		t.Errorf("ledger after CloseOrphans: %+v, %v", ls, err)
	}
	if n, _ := CloseOrphans(t.Context(), Deps{Runtime: goneRuntime{}, Log: quiet}, lay, nil, nil); n != 0 {
		t.Errorf("second pass closed %d, want 0", n)
	}
}

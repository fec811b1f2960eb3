package episode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/agents/record"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/jobkind"
)

// Recover closes the record of an episode whose daemon died mid-run: it
// removes the episode's containers and workspace, cuts torn final lines off
// the recording and the ledger (the ledger keeps them in a .torn side file),
// and writes run_status.json with failure "infrastructure". It creates no
// recording or ledger the episode never wrote: without a ledger,
// run_status.json has no ledger_head and its reason says so.
func Recover(ctx context.Context, d Deps, id, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	var errs []error
	if err := retryCleanup(ctx, d.Log, "kill containers of "+id, d.CleanupBudget, func(ctx context.Context) error {
		return d.Runtime.KillEpisode(ctx, id)
	}); err != nil {
		errs = append(errs, fmt.Errorf("kill containers: %w", err))
	}
	if err := retryCleanup(ctx, d.Log, "remove workspace of "+id, d.CleanupBudget, func(ctx context.Context) error {
		return d.Runtime.RemoveWorkspace(ctx, id)
	}); err != nil {
		errs = append(errs, fmt.Errorf("remove workspace: %w", err))
	}
	st := Status{EpisodeID: id, Exit: ExitFailed, Failure: FailInfra,
		Reason: InterruptedReason + "; the record ends at the last durable call", LastToolCalls: []ToolCall{}}
	if b, err := os.ReadFile(filepath.Join(dir, EpisodeFile)); err == nil {
		var info Info
		if jsonErr := json.Unmarshal(b, &info); jsonErr == nil {
			st.Started, st.Model, st.DryRun = info.Started, info.Model, info.DryRun
		}
	}
	if w, err := record.Reopen(filepath.Join(dir, RequestsFile), id); err == nil {
		st.ModelCalls = int(w.Seq())
		w.Close()
		st.Tokens = spentTokens(filepath.Join(dir, RequestsFile))
	} else if !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if w, err := ledger.Reopen(filepath.Join(dir, LedgerFile), id); err == nil {
		seq, hash := w.Head()
		st.LedgerHead = &Head{Seq: seq, Hash: hash}
		w.Close()
	} else if errors.Is(err, os.ErrNotExist) {
		st.Reason += "; it stopped before its ledger was created, so it has no " + LedgerFile
		if d.Log != nil {
			d.Log.Info("interrupted episode has no ledger; none created", "episode", id)
		}
	} else {
		errs = append(errs, err)
	}
	if f, err := os.Open(filepath.Join(dir, LedgerFile)); err == nil {
		if recs, err := ledger.Read(f); err == nil {
			agents := map[string]bool{}
			for _, r := range recs {
				switch r.Tool {
				case ledger.ToolAgentStart:
					agents[r.Agent] = true
				case ledger.ToolAgentFinish, ledger.ToolLoopHalt, ledger.ToolProtectedWriteDenied:
				default:
					st.ToolCalls++
					st.LastToolCalls = append(st.LastToolCalls, ToolCall{Agent: r.Agent, Tool: r.Tool, OK: r.OK})
				}
			}
			st.Agents = len(agents)
			if n := len(st.LastToolCalls); n > lastCalls {
				st.LastToolCalls = st.LastToolCalls[n-lastCalls:]
			}
		}
		f.Close()
	}
	st.Finished = time.Now().UTC()
	if err := writeJSON(filepath.Join(dir, StatusFile), st); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// CloseOrphans closes, through CloseInterrupted, every episode a crash cut
// off: the rows still "running" in the store (running, listed by the
// caller) and every episode directory under lay with an episode.json but no
// run_status.json, skipping what runs in this process. So an episode whose
// job is not retried (it reached its attempt cap, or was cancelled while
// interrupted) is closed all the same, its row and event included, and its
// ledger verifies. Meant for start-up, before jobs resume; rows may be nil.
// It returns how many it closed.
func CloseOrphans(ctx context.Context, d Deps, lay datadir.Layout, rows jobkind.EpisodeCloser, running []jobkind.EpisodeRecord) (int, error) {
	todo := map[string]jobkind.EpisodeRecord{}
	for _, r := range running {
		r.Dir = lay.Episode(r.ID)
		todo[r.ID] = r
	}
	ents, err := os.ReadDir(lay.Episodes())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("list episodes: %w", err)
	}
	for _, e := range ents {
		id, dir := e.Name(), lay.Episode(e.Name())
		if _, ok := todo[id]; ok || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, EpisodeFile)); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, StatusFile)); err == nil {
			continue
		}
		rec := jobkind.EpisodeRecord{ID: id, Dir: dir}
		if info, err := episodefmt.ReadInfo(dir); err == nil {
			rec.JobID, rec.TaskID = info.JobID, info.TaskID
		}
		todo[id] = rec
	}
	n := 0
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(todo)) {
		if Running(id) {
			continue
		}
		if _, _, err := CloseInterrupted(ctx, d, rows, todo[id]); err != nil {
			errs = append(errs, fmt.Errorf("close episode %s: %w", id, err))
		}
		n++
	}
	return n, errors.Join(errs...)
}

// spentTokens sums the usage of every recorded model call: what the
// interrupted episode cost, though it yields no data.
func spentTokens(path string) Tokens {
	recs, err := record.ReadFile(path)
	var t Tokens
	if err != nil {
		return t
	}
	for _, r := range recs {
		if r.Response != nil {
			t.Prompt += int64(r.Response.Usage.PromptTokens)
			t.Completion += int64(r.Response.Usage.CompletionTokens)
		}
	}
	return t
}

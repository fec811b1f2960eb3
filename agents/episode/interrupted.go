package episode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mass-dev/mass/jobkind"
)

// InterruptedReason starts the reason of every run_status.json Recover
// writes for an episode a massd crash cut off.
const InterruptedReason = "massd stopped while the episode was running"

// EventInterrupted is the job event CloseInterrupted appends, once per
// episode.
const EventInterrupted = "episode_interrupted"

// StatusInterrupted is the store status of an episode a crash cut off.
const StatusInterrupted = "interrupted"

// Interrupted reports whether s is the status Recover wrote for an episode
// a crash cut off (not one the episode wrote itself).
func (s Status) Interrupted() bool {
	return s.Failure == FailInfra && strings.HasPrefix(s.Reason, InterruptedReason)
}

// CloseInterrupted is the one close path of an episode a massd crash cut
// off, used by start-up recovery (CloseOrphans) and by every job kind's
// resume. Unless the episode's directory already holds a run_status.json,
// Recover writes one (and removes its containers and workspace); then rows
// ends the episode's store row and appends an episode_interrupted event to
// its job, in one transaction and only while the row still says running.
// Calling it again changes nothing. An episode that never created its
// directory gets no run_status.json; one whose run_status.json is its own
// end gets that status in its row and no event. rec names the episode (ID,
// Dir) and, if known, its job and task; rows may be nil (files only). It
// returns the episode's status and whether the row changed.
func CloseInterrupted(ctx context.Context, d Deps, rows jobkind.EpisodeCloser, rec jobkind.EpisodeRecord) (Status, bool, error) {
	var errs []error
	st, err := ReadStatus(rec.Dir)
	if err != nil {
		if dirExists(rec.Dir) {
			if rerr := Recover(ctx, d, rec.ID, rec.Dir); rerr != nil {
				errs = append(errs, rerr)
			}
			st, err = ReadStatus(rec.Dir)
		}
	}
	ev := jobkind.Event{}
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		errs = append(errs, err)
		fallthrough
	case err != nil:
		rec.Status, rec.Summary = StatusInterrupted, nil
		st = Status{EpisodeID: rec.ID, Exit: ExitFailed, Failure: FailInfra, Reason: InterruptedReason + " before it created its directory"}
	case st.Interrupted():
		rec.Status, rec.Summary = StatusInterrupted, st
	default:
		rec.Status, rec.Summary = st.Exit, st
	}
	if rec.Status == StatusInterrupted {
		ev = jobkind.Event{Type: EventInterrupted,
			Message: fmt.Sprintf("episode %s was cut off by a massd restart: closed as interrupted (failure %s, %d model calls, %d prompt + %d completion tokens spent), never used as data",
				rec.ID, FailInfra, st.ModelCalls, st.Tokens.Prompt, st.Tokens.Completion),
			Fields: map[string]any{"episode_id": rec.ID, "model_calls": st.ModelCalls,
				"prompt_tokens": st.Tokens.Prompt, "completion_tokens": st.Tokens.Completion}}
	}
	changed := false
	if rows != nil {
		c, err := rows.CloseEpisode(ctx, rec, ev)
		if err != nil {
			errs = append(errs, err)
		}
		changed = c
	}
	return st, changed, errors.Join(errs...)
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

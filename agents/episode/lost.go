package episode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/jobkind"
)

// LostAttempt is an episode a job attempt started and a massd crash cut
// off: it is closed (run_status.json, failure infrastructure) and never
// used as data, but what it cost is reported.
type LostAttempt struct {
	Attempt    int    `json:"attempt"`
	EpisodeID  string `json:"episode_id"`
	Exit       string `json:"exit"`
	Reason     string `json:"reason"`
	ModelCalls int    `json:"model_calls"`
	Tokens     Tokens `json:"tokens"`
}

// lostFile marks a set-aside attempt dir whose episodes were reported.
const lostFile = "lost.json"

// closeInterrupted finishes the record of the episodes earlier attempts of
// this job started (the job manager set each attempt's work dir aside as
// <dir>.attempt-N) and reports each once, with an attempt_lost event.
func closeInterrupted(d Deps, job jobkind.Job, rep jobkind.Reporter) []LostAttempt {
	dirs, _ := filepath.Glob(job.WorkDir + ".attempt-*")
	sort.Slice(dirs, func(i, j int) bool { return attemptOf(dirs[i]) < attemptOf(dirs[j]) })
	var all []LostAttempt
	for _, dir := range dirs {
		if b, err := os.ReadFile(filepath.Join(dir, lostFile)); err == nil {
			var done []LostAttempt
			if json.Unmarshal(b, &done) == nil {
				all = append(all, done...)
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, attemptsFile))
		if err != nil {
			continue
		}
		var lost []LostAttempt
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if id := strings.TrimSpace(sc.Text()); id != "" {
				lost = append(lost, closeOne(d, job, rep, id, attemptOf(dir)))
			}
		}
		if err := writeJSON(filepath.Join(dir, lostFile), lost); err != nil {
			rep.Logger().Warn("mark lost attempt reported", "dir", dir, "err", err)
		}
		all = append(all, lost...)
	}
	return all
}

// closeOne closes episode id through CloseInterrupted and reports it.
func closeOne(d Deps, job jobkind.Job, rep jobkind.Reporter, id string, attempt int) LostAttempt {
	dir := job.Layout.Episode(id)
	// Bounded like an episode's own finish: a hung engine must not hold
	// the retry forever.
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	rows, _ := rep.(jobkind.EpisodeCloser)
	st, _, err := CloseInterrupted(ctx, d, rows, jobkind.EpisodeRecord{ID: id, JobID: job.ID, TaskID: job.TaskID, Dir: dir})
	cancel()
	if err != nil {
		rep.Logger().Warn("close interrupted episode", "episode", id, "err", err)
	}
	if rows == nil {
		rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, TaskID: job.TaskID, Status: StatusInterrupted, Dir: dir})
	}
	l := LostAttempt{Attempt: attempt, EpisodeID: id, Exit: st.Exit, Reason: st.Reason, ModelCalls: st.ModelCalls, Tokens: st.Tokens}
	if l.Reason == "" {
		l.Reason = InterruptedReason
	}
	rep.Event("attempt_lost", fmt.Sprintf("attempt %d lost to a massd restart: episode %s (%d model calls, %d prompt + %d completion tokens spent)",
		attempt, id, l.ModelCalls, l.Tokens.Prompt, l.Tokens.Completion), map[string]any{
		"attempt": attempt, "episode_id": id, "reason": l.Reason, "model_calls": l.ModelCalls,
		"prompt_tokens": l.Tokens.Prompt, "completion_tokens": l.Tokens.Completion})
	return l
}

// attemptOf is N of a <dir>.attempt-N path (0 when it has none).
func attemptOf(dir string) int {
	i := strings.LastIndex(dir, ".attempt-")
	if i < 0 {
		return 0
	}
	n, _ := strconv.Atoi(dir[i+len(".attempt-"):])
	return n
}

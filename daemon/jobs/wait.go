package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
)

func parseWait(raw json.RawMessage) (jobwire.WaitParams, error) {
	p := jobwire.WaitParams{Seconds: 10, IntervalMS: 1000}
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, err
	}
	if p.Seconds <= 0 || p.Seconds > 7*24*3600 {
		return p, fmt.Errorf("seconds %v must be between 0 and 604800", p.Seconds)
	}
	if p.IntervalMS < 10 || p.IntervalMS > 3600_000 {
		return p, fmt.Errorf("interval_ms %d must be between 10 and 3600000", p.IntervalMS)
	}
	return p, nil
}

// waitState is the kind's checkpoint, so a resumed job continues counting.
type waitState struct {
	Done int `json:"done"`
}

// WaitKind returns the built-in "wait" kind: it emits a tick event and
// progress every interval for a duration. Operators use it to check the
// pipeline end to end; it resumes from its checkpoint after a crash.
func WaitKind() jobkind.Kind {
	return jobkind.Kind{
		Name:        jobwire.WaitKind,
		Description: `emit a tick every interval_ms for seconds (params {"seconds":N,"interval_ms":M})`,
		OnInterrupt: jobkind.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := parseWait(raw); return err },
		Run:         runWait,
	}
}

func runWait(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
	p, err := parseWait(job.Params)
	if err != nil {
		return err
	}
	interval := time.Duration(p.IntervalMS) * time.Millisecond
	total := int((time.Duration(p.Seconds*float64(time.Second)) + interval - 1) / interval)
	ckpt := filepath.Join(job.WorkDir, "wait.json")
	var st waitState
	if b, err := os.ReadFile(ckpt); err == nil {
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("read checkpoint %s: %w", ckpt, err)
		}
		if st.Done > 0 {
			rep.Event("resumed", fmt.Sprintf("resuming after tick %d", st.Done), map[string]any{"done": st.Done})
		}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for st.Done < total {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		st.Done++
		// Checkpoint before the event: after a crash a tick may be missing
		// from the stream, but it is never reported twice.
		if err := writeJSONAtomic(ckpt, st); err != nil {
			return err
		}
		rep.Event("tick", fmt.Sprintf("tick %d/%d", st.Done, total), map[string]any{"tick": st.Done, "ticks": total, "attempt": job.Attempt})
		rep.Progress(jobkind.Progress{Stage: "waiting", Counters: map[string]int64{"tick": int64(st.Done), "ticks": int64(total)}})
	}
	rep.SetResult(map[string]any{"ticks": total, "attempts": job.Attempt})
	return nil
}

func writeJSONAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

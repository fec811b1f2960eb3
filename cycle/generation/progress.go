package generation

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mass-dev/mass/jobkind"
)

// StageEvent is the event the pipeline appends on entering each stage; the
// job manager counts a stage left in an attempt as progress.
const StageEvent = "generation_stage"

// Progress is what a stage reports as it goes: the stage, the task it
// works on ("" for stages over the whole generation), the numbers that
// matter as "name value" fields in order of importance, and the same
// numbers as counters for programs.
type Progress struct {
	Stage    string
	Task     string
	Fields   []string
	Counters map[string]int64
}

// Message is the fields two spaces apart, the task first: the structured
// line `massctl job watch` splits and fits to the terminal.
func (p Progress) Message() string {
	parts := p.Fields
	if p.Task != "" {
		parts = append([]string{p.Task}, parts...)
	}
	return strings.Join(parts, "  ")
}

// stageProgress turns the pipeline's progress into the job's: the stage
// with its place among Stages (counters stage/stages), the stage's
// numbers, and one event per stage change so a job's events list every
// stage it ran.
func stageProgress(rep jobkind.Reporter) func(Progress) {
	var mu sync.Mutex
	cur := ""
	return func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Stage != cur {
			cur = p.Stage
			rep.Event(StageEvent, p.Stage, map[string]any{"stage": p.Stage})
		}
		c := map[string]int64{"stage": int64(slices.Index(Stages, p.Stage) + 1), "stages": int64(len(Stages))}
		for k, v := range p.Counters {
			c[k] = v
		}
		rep.Progress(jobkind.Progress{Stage: p.Stage, Message: p.Message(), Counters: c})
	}
}

// collectProgress is a task's collection so far: runs finished of those
// planned, eligible of those needed, and the ineligible ones.
func collectProgress(task string, runs, planned, eligible, needed int) Progress {
	failed := runs - eligible
	return Progress{Stage: "collect", Task: task,
		Fields: []string{fmt.Sprintf("eligible %d/%d", eligible, needed), fmt.Sprintf("runs %d/%d", runs, planned),
			fmt.Sprintf("failed %d", failed)},
		Counters: map[string]int64{"runs": int64(runs), "planned_runs": int64(planned), "eligible": int64(eligible),
			"needed": int64(needed), "failed": int64(failed)}}
}

// rankProgress is a task's ring so far: judgments done of the ring's, and
// the invalid ones among them.
func rankProgress(task string, done, total, invalid int) Progress {
	return Progress{Stage: "rank", Task: task,
		Fields:   []string{fmt.Sprintf("judgments %d/%d", done, total), fmt.Sprintf("invalid %d", invalid)},
		Counters: map[string]int64{"judgment": int64(done), "judgments": int64(total), "invalid": int64(invalid)}}
}

// progress hands p to the configured listener.
func (p *pipeline) progress(pr Progress) {
	p.cfg.Log.Debug("generation", "g", p.cfg.G, "stage", pr.Stage, "msg", pr.Message())
	if p.cfg.Progress != nil {
		p.cfg.Progress(pr)
	}
}

// note reports a stage's one-line state (its start, what it is doing).
func (p *pipeline) note(stage, msg string) {
	p.progress(Progress{Stage: stage, Fields: []string{msg}})
}

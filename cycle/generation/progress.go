package generation

import (
	"slices"
	"sync"

	"github.com/mass-dev/mass/jobkind"
)

// StageEvent is the event the pipeline appends on entering each stage; the
// job manager counts a stage left in an attempt as progress.
const StageEvent = "generation_stage"

// stageProgress turns the pipeline's progress calls into the job's
// progress: the stage with its place among Stages ("stage 3/8" in job
// watch), how many slots (episodes, judgments) the stage has started, the
// latest message, and one event per stage change so a job's events list
// every stage it ran.
func stageProgress(rep jobkind.Reporter) func(stage, msg string) {
	var mu sync.Mutex
	cur, started := "", int64(0)
	return func(stage, msg string) {
		mu.Lock()
		defer mu.Unlock()
		if stage != cur {
			cur, started = stage, 0
			rep.Event(StageEvent, stage, map[string]any{"stage": stage})
		}
		if msg != "start" {
			started++
		}
		rep.Progress(jobkind.Progress{Stage: stage, Message: msg, Counters: map[string]int64{
			"stage": int64(slices.Index(Stages, stage) + 1), "stages": int64(len(Stages)), "slots_started": started}})
	}
}

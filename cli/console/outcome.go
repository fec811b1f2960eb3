package console

import (
	"encoding/json"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
)

// Outcome is what a row shows of an episode: its status corrected by
// what it achieved. An episode that completed but failed its grade, or
// left its required outputs missing, is not shown in green as completed.
type Outcome struct {
	Text  string
	Class string // a state class of the layout's stylesheet (s-succeeded, s-failed, …)
}

// episodeOutcome reads the episode's summary (agents/episode.Result):
// success, the grade's verdict and whether the required outputs exist.
func episodeOutcome(e api.Episode) Outcome {
	var s struct {
		Success        *bool  `json:"success"`
		OutputsPresent *bool  `json:"outputs_present"`
		Failure        string `json:"failure"`
		Grade          *struct {
			Passed bool `json:"passed"`
		} `json:"grade"`
	}
	if e.Status == "running" || len(e.Summary) == 0 || json.Unmarshal(e.Summary, &s) != nil || s.Success == nil {
		return Outcome{Text: e.Status, Class: "s-" + e.Status}
	}
	var why []string
	if s.Grade != nil {
		if s.Grade.Passed {
			why = append(why, "grade passed")
		} else {
			why = append(why, "grade failed")
		}
	}
	if s.OutputsPresent != nil && !*s.OutputsPresent {
		why = append(why, "outputs missing")
	}
	if s.Failure != "" {
		why = append(why, s.Failure)
	}
	text, class := "succeeded", "s-succeeded"
	if !*s.Success {
		text, class = "unsuccessful", "s-failed"
	}
	if len(why) > 0 {
		text += " (" + strings.Join(why, ", ") + ")"
	}
	return Outcome{Text: text, Class: class}
}

// JobTasks is the task a job names, or for kinds that take several (a
// generation, a cycle, a rollout) the tasks of its params.
func JobTasks(j api.Job) string {
	if j.TaskID != "" {
		return j.TaskID
	}
	var p struct {
		Tasks json.RawMessage `json:"tasks"`
	}
	if json.Unmarshal(j.Params, &p) != nil || len(p.Tasks) == 0 {
		return ""
	}
	var list []string
	if json.Unmarshal(p.Tasks, &list) == nil {
		return strings.Join(list, ", ")
	}
	var one string
	if json.Unmarshal(p.Tasks, &one) == nil {
		return one
	}
	return ""
}

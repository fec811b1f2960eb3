package console

import (
	"encoding/json"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
)

// An episode whose grade failed and whose outputs are missing showed
// "completed" in green.
func TestEpisodeOutcome(t *testing.T) {
	tests := []struct {
		status, summary string
		want            Outcome
	}{
		{"completed", `{"success":false,"outputs_present":false,"grade":{"passed":false}}`, Outcome{"unsuccessful (grade failed, outputs missing)", "s-failed"}},
		{"completed", `{"success":true,"outputs_present":true,"grade":{"passed":true}}`, Outcome{"succeeded (grade passed)", "s-succeeded"}},
		{"completed", `{"success":true,"outputs_present":true}`, Outcome{"succeeded", "s-succeeded"}},
		{"failed", `{"success":false,"failure":"infrastructure"}`, Outcome{"unsuccessful (infrastructure)", "s-failed"}},
		{"running", `{"success":true}`, Outcome{"running", "s-running"}},
		{"completed", ``, Outcome{"completed", "s-completed"}},
		{"completed", `not json`, Outcome{"completed", "s-completed"}},
	}
	for _, tt := range tests {
		if got := episodeOutcome(api.Episode{Status: tt.status, Summary: json.RawMessage(tt.summary)}); got != tt.want {
			t.Errorf("%s %s: %+v, want %+v", tt.status, tt.summary, got, tt.want)
		}
	}
}

// Cycle and generation jobs showed no task: theirs are in the params.
func TestJobTasks(t *testing.T) {
	for params, want := range map[string]string{
		`{"tasks":["ml-classifier","sales-analysis"],"model":"scripted"}`: "ml-classifier, sales-analysis",
		`{"tasks":"a"}`: "a", `{}`: "", ``: "", `{"tasks":3}`: "",
	} {
		if got := JobTasks(api.Job{Params: json.RawMessage(params)}); got != want {
			t.Errorf("%s: %q, want %q", params, got, want)
		}
	}
	if got := JobTasks(api.Job{TaskID: "t", Params: json.RawMessage(`{"tasks":["x"]}`)}); got != "t" {
		t.Errorf("task id: %q", got)
	}
}

package search

import (
	"encoding/json"
	"strings"
	"testing"
)

// The notices follow the reference's conditions: FAILURE for a run that
// did not complete (RECURRENT when an earlier version failed too),
// RESOLVED for one that completed after earlier failures, none otherwise.
func TestExecutionMetadataNotices(t *testing.T) {
	ok := EpisodeResult{Exit: "completed", Success: true, FailureMessage: "grader did not pass: 3/5"}
	bad := EpisodeResult{Exit: "failed", Failure: "timeout", FailureMessage: strings.Repeat("x", 2000),
		LastToolCalls: []ToolCall{{Tool: "a", Args: "1"}, {Tool: "b", Args: strings.Repeat("y", 300)}, {Tool: "c"}, {Tool: "d"}, {Tool: "e"}, {Tool: "f"}}}
	cases := []struct {
		name     string
		cur      EpisodeResult
		prior    map[int]EpisodeResult
		has, not []string
	}{
		{"clean", ok, map[int]EpisodeResult{0: ok}, nil, []string{"NOTICE", "RECURRENT", "RESOLVED", "prior_failures", "grader"}},
		{"failed once", bad, map[int]EpisodeResult{0: ok}, []string{"FAILURE NOTICE:"}, []string{"RECURRENT", "RESOLVED"}},
		{"failed again", bad, map[int]EpisodeResult{0: bad}, []string{"FAILURE NOTICE:", "\nRECURRENT FAILURE:"}, []string{"RESOLVED"}},
		{"resolved", ok, map[int]EpisodeResult{0: bad, 1: ok}, []string{"\n\nRESOLVED FAILURE HISTORY:"}, []string{"FAILURE NOTICE", "RECURRENT"}},
	}
	for _, c := range cases {
		got := ExecutionMetadata(c.cur, c.prior, 2)
		for _, s := range c.has {
			if !strings.Contains(got, s) {
				t.Errorf("%s: lacks %q:\n%s", c.name, s, got)
			}
		}
		for _, s := range c.not {
			if strings.Contains(got, s) {
				t.Errorf("%s: has %q:\n%s", c.name, s, got)
			}
		}
	}
	// The failure record keeps the reference's caps: a 1,500-character
	// message and the 5 most recent tool calls, arguments cut to 200.
	body, _, _ := strings.Cut(ExecutionMetadata(bad, nil, 0), "\n\nFAILURE NOTICE")
	var st runStatus
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 1 || st.Success || st.Failure == nil || len(*st.Failure.Message) != 1500 || len(st.Failure.LastCalls) != 5 ||
		st.Failure.LastCalls[0].Tool != "f" || len(st.Failure.LastCalls[4].Args) != 200 {
		t.Fatalf("failure record %+v", st.Failure)
	}
}

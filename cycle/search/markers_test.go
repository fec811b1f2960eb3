package search

import (
	"testing"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/judge"
)

// The scripted model keys its roles on these markers; it cannot import
// cycle/ (a lower layer), so the strings are kept equal here.
func TestScriptedMarkers(t *testing.T) {
	if scripted.EvaluatorMarker != judge.Marker || scripted.AgentEvaluatorMarker != judge.AgentMarker || scripted.OptimizerMarker != OptimizerMarker {
		t.Fatal("scripted role markers differ from the prompts'")
	}
}

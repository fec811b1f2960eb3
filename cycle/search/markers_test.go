package search

import (
	"testing"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/taskspec/refimport"
)

// The scripted model keys its roles on these markers; it cannot import
// cycle/ (a lower layer), so the strings are kept equal here.
func TestScriptedMarkers(t *testing.T) {
	if scripted.EvaluatorMarker != judge.Marker || scripted.AgentEvaluatorMarker != judge.AgentMarker || scripted.OptimizerMarker != OptimizerMarker {
		t.Fatal("scripted role markers differ from the prompts'")
	}
}

// The importer writes a query template only when this package can split it.
func TestImporterEndMarker(t *testing.T) {
	if refimport.EndMarker != EndMarker {
		t.Fatal("the importer's end marker differs from the search's")
	}
}

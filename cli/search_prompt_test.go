package cli

import (
	"encoding/json"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/search"
)

// The toggles the command line sets reach the job params; the others stay
// unset, so the search applies the reference pipeline's defaults.
func TestSearchPromptFlags(t *testing.T) {
	var got search.OptionParams
	app := &cli.App{Flags: searchPromptFlags(), Action: func(c *cli.Context) error { got = searchPromptParams(c); return nil }}
	if err := app.Run([]string{"x", "--include-best-design=false", "--max-design-chars", "12000", "--target-design-chars", "8000",
		"--improvement-output-mode", "design-text", "--results-json-max-chars", "0"}); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"include_best_design":false,"results_json_max_chars":0,"max_design_chars":12000,"target_design_chars":8000,"improvement_output_mode":"design-text"}`; string(b) != want {
		t.Fatalf("params %s, want %s", b, want)
	}
	o := search.OptionsOf(got)
	d := search.DefaultPromptOptions()
	if o.IncludeBestDesign || !o.HistoryDesignDiffs || o.ResultsJSONMaxChars != 0 || o.ResultsJSONTotalMaxChars != d.ResultsJSONTotalMaxChars || o.Validate() != nil {
		t.Fatalf("options %+v", o)
	}
	raw, _ := json.Marshal(search.Params{SearchOptionParams: search.OptionParams{TargetDesignChars: got.TargetDesignChars}})
	if _, err := search.ParseParams(raw); err == nil {
		t.Fatal("a target without a maximum was accepted")
	}
}

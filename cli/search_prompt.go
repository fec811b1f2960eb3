package cli

import (
	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/search"
)

// searchPromptFlags are the reference optimizer's toggles, with the
// values its pipeline runs as defaults.
func searchPromptFlags() []cli.Flag {
	d := search.DefaultPromptOptions()
	return []cli.Flag{
		&cli.BoolFlag{Name: "include-best-design", Value: d.IncludeBestDesign, Usage: "show the optimizer the previous best design beside the current one (=false to hide)"},
		&cli.BoolFlag{Name: "history-design-diffs", Value: d.HistoryDesignDiffs, Usage: "attach to each history verdict the design diff behind it"},
		&cli.BoolFlag{Name: "include-v0-design", Value: d.IncludeV0Design, Usage: "show the optimizer the original design v0"},
		&cli.BoolFlag{Name: "omit-full-results-json", Value: d.OmitFullResultsJSON, Usage: "leave the results/*.json appendix out of the optimizer prompt"},
		&cli.IntFlag{Name: "results-json-max-chars", Value: d.ResultsJSONMaxChars, Usage: "per-file character cap of the results/*.json appendix `N` (0: none)"},
		&cli.IntFlag{Name: "results-json-total-max-chars", Value: d.ResultsJSONTotalMaxChars, Usage: "total character budget of the results/*.json appendix `N` (0: none)"},
		&cli.BoolFlag{Name: "forbid-fixed-agent-limits", Value: d.ForbidFixedAgentLimits, Usage: "ask for no numerical caps on agents, hops, turns or time, and reject designs that set them"},
		&cli.IntFlag{Name: "max-design-chars", Value: d.MaxDesignChars, Usage: "reject a design longer than `N` characters (0: no limit)"},
		&cli.IntFlag{Name: "target-design-chars", Value: d.TargetDesignChars, Usage: "soft design size `N` the prompt asks for (needs --max-design-chars)"},
		&cli.StringFlag{Name: "improvement-output-mode", Value: d.OutputMode, Usage: "optimizer answer format: json or design-text"},
	}
}

// searchPromptParams are the toggles the command line set; the rest keep
// the search's defaults.
func searchPromptParams(c *cli.Context) search.OptionParams {
	var p search.OptionParams
	flag := func(name string, dst **bool) {
		if c.IsSet(name) {
			v := c.Bool(name)
			*dst = &v
		}
	}
	num := func(name string, dst **int) {
		if c.IsSet(name) {
			v := c.Int(name)
			*dst = &v
		}
	}
	flag("include-best-design", &p.IncludeBestDesign)
	flag("history-design-diffs", &p.HistoryDesignDiffs)
	flag("include-v0-design", &p.IncludeV0Design)
	flag("omit-full-results-json", &p.OmitFullResultsJSON)
	flag("forbid-fixed-agent-limits", &p.ForbidFixedAgentLimits)
	num("results-json-max-chars", &p.ResultsJSONMaxChars)
	num("results-json-total-max-chars", &p.ResultsJSONTotalMaxChars)
	num("max-design-chars", &p.MaxDesignChars)
	num("target-design-chars", &p.TargetDesignChars)
	if c.IsSet("improvement-output-mode") {
		p.OutputMode = c.String("improvement-output-mode")
	}
	return p
}

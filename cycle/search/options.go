package search

import (
	"errors"
	"fmt"

	"github.com/mass-dev/mass/jobwire"
)

// Output modes of the optimizer (the reference's --improvement-output-mode).
const (
	OutputJSON       = "json"
	OutputDesignText = "design-text"
)

// Caps of the results/*.json appendix as the reference's pipeline runs
// the optimizer (--results-json-max-chars 24000, --results-json-total-max-chars 120000).
const (
	DefaultResultsJSONMaxChars      = 24000
	DefaultResultsJSONTotalMaxChars = 120000
)

// PromptOptions are the reference optimizer's toggles. Their defaults are
// the values its pipeline (mass/pipeline.py `search`) passes: the best
// design, the history diffs and v0 shown, the full results/*.json
// appendix with its caps, JSON output, no size or cap rules. A zero
// character cap means none.
type PromptOptions struct {
	IncludeBestDesign        bool   `json:"include_best_design"`
	HistoryDesignDiffs       bool   `json:"history_design_diffs"`
	IncludeV0Design          bool   `json:"include_v0_design"`
	OmitFullResultsJSON      bool   `json:"omit_full_results_json"`
	ResultsJSONMaxChars      int    `json:"results_json_max_chars"`
	ResultsJSONTotalMaxChars int    `json:"results_json_total_max_chars"`
	ForbidFixedAgentLimits   bool   `json:"forbid_fixed_agent_limits"`
	MaxDesignChars           int    `json:"max_design_chars"`
	TargetDesignChars        int    `json:"target_design_chars"`
	OutputMode               string `json:"improvement_output_mode"`
}

// DefaultPromptOptions are the pipeline's toggles.
func DefaultPromptOptions() PromptOptions {
	return PromptOptions{IncludeBestDesign: true, HistoryDesignDiffs: true, IncludeV0Design: true,
		ResultsJSONMaxChars: DefaultResultsJSONMaxChars, ResultsJSONTotalMaxChars: DefaultResultsJSONTotalMaxChars,
		OutputMode: OutputJSON}
}

// Validate checks the toggles as the reference does (a target needs a
// maximum and may not exceed it).
func (o PromptOptions) Validate() error {
	switch {
	case o.OutputMode != OutputJSON && o.OutputMode != OutputDesignText:
		return fmt.Errorf("improvement_output_mode %q: want json or design-text", o.OutputMode)
	case o.ResultsJSONMaxChars < 0 || o.ResultsJSONTotalMaxChars < 0 || o.MaxDesignChars < 0 || o.TargetDesignChars < 0:
		return errors.New("character caps must be 0 (none) or positive")
	case o.TargetDesignChars > 0 && o.MaxDesignChars == 0:
		return errors.New("target_design_chars requires a finite max_design_chars value")
	case o.TargetDesignChars > o.MaxDesignChars && o.MaxDesignChars > 0:
		return errors.New("target_design_chars cannot exceed max_design_chars")
	}
	return nil
}

// OptionParams are the toggles as job params (jobwire.SearchOptionParams):
// unset keeps the default.
type OptionParams = jobwire.SearchOptionParams

// OptionsOf applies the set params to the defaults.
func OptionsOf(p OptionParams) PromptOptions {
	o := DefaultPromptOptions()
	for _, b := range []struct {
		src *bool
		dst *bool
	}{{p.IncludeBestDesign, &o.IncludeBestDesign}, {p.HistoryDesignDiffs, &o.HistoryDesignDiffs},
		{p.IncludeV0Design, &o.IncludeV0Design}, {p.OmitFullResultsJSON, &o.OmitFullResultsJSON},
		{p.ForbidFixedAgentLimits, &o.ForbidFixedAgentLimits}} {
		if b.src != nil {
			*b.dst = *b.src
		}
	}
	for _, n := range []struct {
		src *int
		dst *int
	}{{p.ResultsJSONMaxChars, &o.ResultsJSONMaxChars}, {p.ResultsJSONTotalMaxChars, &o.ResultsJSONTotalMaxChars},
		{p.MaxDesignChars, &o.MaxDesignChars}, {p.TargetDesignChars, &o.TargetDesignChars}} {
		if n.src != nil {
			*n.dst = *n.src
		}
	}
	if p.OutputMode != "" {
		o.OutputMode = p.OutputMode
	}
	return o
}

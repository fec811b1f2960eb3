package jobwire

// SearchKind is the job kind of a workflow search.
const SearchKind = "search"

// SearchParams are the parameters of a "search" job.
type SearchParams struct {
	Model          string `json:"model,omitempty"`           // executor; default: massd's default model
	JudgeModel     string `json:"judge_model,omitempty"`     // default: model
	OptimizerModel string `json:"optimizer_model,omitempty"` // default: model
	Iterations     *int   `json:"iterations,omitempty"`      // default 11
	Seed           int64  `json:"seed,omitempty"`
	Judgments      int    `json:"judgments,omitempty"`     // per comparison, default 1
	JudgeMode      string `json:"judge_mode,omitempty"`    // bundle (default) | agent
	Judging        string `json:"judging,omitempty"`       // reference (default) | paper | adjacent
	JudgeRetries   *int   `json:"judge_retries,omitempty"` // re-asks of an unparseable verdict, default 2
	// Resume is the id of an existing search folder of the task
	// (search/<task>/<resume>) to continue instead of a new one.
	Resume string `json:"resume,omitempty"`
	// The optimizer prompt's toggles (the reference's flags); unset: the
	// reference pipeline's values.
	SearchOptionParams
}

// SearchOptionParams are the optimizer prompt's toggles as job params
// (the reference's command-line flags): unset keeps the default.
type SearchOptionParams struct {
	IncludeBestDesign        *bool  `json:"include_best_design,omitempty"`
	HistoryDesignDiffs       *bool  `json:"history_design_diffs,omitempty"`
	IncludeV0Design          *bool  `json:"include_v0_design,omitempty"`
	OmitFullResultsJSON      *bool  `json:"omit_full_results_json,omitempty"`
	ResultsJSONMaxChars      *int   `json:"results_json_max_chars,omitempty"`
	ResultsJSONTotalMaxChars *int   `json:"results_json_total_max_chars,omitempty"`
	ForbidFixedAgentLimits   *bool  `json:"forbid_fixed_agent_limits,omitempty"`
	MaxDesignChars           *int   `json:"max_design_chars,omitempty"`
	TargetDesignChars        *int   `json:"target_design_chars,omitempty"`
	OutputMode               string `json:"improvement_output_mode,omitempty"`
}

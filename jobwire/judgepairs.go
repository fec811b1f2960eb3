package jobwire

// JudgePairsKind is the job kind that judges a rollout's pairs.
const JudgePairsKind = "judge-pairs"

// JudgePairsParams are a judge-pairs job's parameters.
type JudgePairsParams struct {
	Rollout     string   `json:"rollout"`               // the evaluation name (evals/<name>)
	Baseline    string   `json:"baseline,omitempty"`    // default: the rollout's first model
	Judges      []string `json:"judges,omitempty"`      // a subset of massd's judges; default all
	SelfJudges  []string `json:"self_judges,omitempty"` // default: every model of the rollout
	NoSelf      bool     `json:"no_self,omitempty"`     // no self-judges (no agreement)
	SelfSeed    int64    `json:"self_seed,omitempty"`   // default DefaultSelfSeed
	Mode        string   `json:"mode,omitempty"`        // bundle (default) | agent
	Concurrency int      `json:"concurrency,omitempty"` // default 4
}

package jobwire

// RolloutKind is the job kind of a rollout.
const RolloutKind = "rollout"

// RolloutParams are a rollout job's parameters; zero values mean the defaults.
type RolloutParams struct {
	Name        string   `json:"name,omitempty"` // evals/<name>; default: the job id
	Tasks       []string `json:"tasks"`          // held-out tasks (split: test)
	Models      []string `json:"models"`         // the first is the baseline, e.g. base, gen-1, gen-2
	Episodes    int      `json:"episodes,omitempty"`
	Seed        int64    `json:"seed,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	// AllowTrainTasks lets split: train tasks roll out too (the paper's
	// train-task rollouts, its Table 5); excluded tasks never run.
	AllowTrainTasks bool `json:"allow_train_tasks,omitempty"`
}

package jobwire

import "encoding/json"

// GenerationKind is the job kind of one generation.
const GenerationKind = "generation"

// CycleKind is the job kind of the whole loop over generations.
const CycleKind = "cycle"

// GenerationParams are a "generation" job's parameters; zero values mean the defaults.
type GenerationParams struct {
	Tasks       []string `json:"tasks"`
	Model       string   `json:"model,omitempty"` // the parent, model g−1; default: massd's default model
	Episodes    int      `json:"episodes,omitempty"`
	MinSuccess  int      `json:"min_success,omitempty"`
	Cap         int      `json:"cap,omitempty"`
	Opponents   int      `json:"opponents,omitempty"`
	Train       int      `json:"train,omitempty"`
	Val         int      `json:"val,omitempty"`
	Concurrency int      `json:"concurrency,omitempty"`
	Seed        int64    `json:"seed,omitempty"`      // the cycle's seed; generation g's base is GenerationSeed(seed, g)
	RankSeed    int64    `json:"rank_seed,omitempty"` // ring and judge seeds' base (the reference's ranking.seed); 0: seed
	FP8         bool     `json:"fp8,omitempty"`
	TrainSteps  int      `json:"train_steps,omitempty"` // 0: mass-train's default
	// Lenient lets render keep selected episodes that yield no window with
	// supervised tokens (counted); by default render fails naming them.
	Lenient bool `json:"lenient,omitempty"`
	// Training is the recipe (render windows and mass-train's knobs);
	// nil or zero fields: the defaults, which are the paper's.
	Training *Recipe `json:"training,omitempty"`
	// ServedName is the new model's name, "{g}" replaced by g; default gen-{g}.
	ServedName string `json:"served_name,omitempty"`
	// Directive, when set, is the execution directive text appended to
	// task + workflow in collection episodes, verbatim, in place of the
	// task's spec directive or mass's own (docs/formats.md).
	Directive string `json:"directive,omitempty"`
}

// CycleParams are a "cycle" job's parameters: a generation's, and how many.
type CycleParams struct {
	GenerationParams
	Generations      int   `json:"generations"`
	SearchIterations int   `json:"search_iterations,omitempty"` // per search; 0: the search kind's default (11)
	SearchSeed       int64 `json:"search_seed,omitempty"`       // the searches' seed base (the reference's search.seed_base); 0: seed
	// SearchJudgments and SearchJudgeMode are the searches' judging rule
	// (judgments per comparison, bundle or agent); 0 and "": the search's.
	SearchJudgments int    `json:"search_judgments,omitempty"`
	SearchJudgeMode string `json:"search_judge_mode,omitempty"`
	// PerGeneration overrides a generation's params, keyed by g ("2":
	// {"episodes": 20, "training": {"lr": 2e-5}}): the cycle2.json case.
	// A key set there replaces the cycle's value (training merges by key);
	// tasks and model are the cycle's own and cannot be overridden.
	PerGeneration map[string]json.RawMessage `json:"per_generation,omitempty"`
}

package report

import (
	"time"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/trainer/train"
)

// Report is everything the page shows; `massctl report --json` prints it.
type Report struct {
	Built       time.Time                `json:"built"`
	Eval        string                   `json:"eval"`
	Baseline    string                   `json:"baseline"`
	Models      []string                 `json:"models"` // the candidates, in the order asked
	Tasks       []string                 `json:"tasks"`
	Episodes    int                      `json:"episodes_per_task"`
	Judges      []judgepairs.JudgeSpec   `json:"judges"`
	Mode        string                   `json:"mode"`
	Unit        string                   `json:"unit"` // what the win-rate intervals resample
	Verdicts    int                      `json:"verdicts"`
	WinRates    []judgepairs.ModelResult `json:"win_rates"`
	Agreement   []judgepairs.Agreement   `json:"agreement"`
	Costs       []judgepairs.JudgeCost   `json:"costs"`    // per judge model, from the verdicts' cost_usd
	CostUSD     float64                  `json:"cost_usd"` // every verdict
	Statistics  []Stat                   `json:"statistics"`
	Generations []Gen                    `json:"generations"`
	Audit       []AuditRow               `json:"audit"`
	Tokens      []TokenRow               `json:"tokens"`
	BlindSpots  []BlindSpot              `json:"blind_spots"`
	Runs        []EpisodeLink            `json:"runs"`
	DryRun      []string                 `json:"dry_run,omitempty"` // models whose episodes ran massd's scripted dry-run policy
}

// Gen is one generation's summary: its ranking, its training and tokens.
type Gen struct {
	G        int                     `json:"g"`
	Model    string                  `json:"model"`
	Parent   string                  `json:"parent"`
	Status   string                  `json:"status"`
	Tokens   generationfmt.Tokens    `json:"tokens"`
	Training *generationfmt.Training `json:"training,omitempty"`
	Loss     []LossPoint             `json:"loss"`
	Ranking  []BTTask                `json:"ranking"`
	// Exposure is what training drew by task and role up to the kept
	// checkpoint (exposure.jsonl; the paper's exposure audit).
	Exposure     []train.ExposureCount `json:"exposure"`
	ExposureStep int                   `json:"exposure_step,omitempty"`
}

// LossPoint is one step of the training metrics: the training loss, the
// validation loss, or both.
type LossPoint struct {
	Step    int      `json:"step"`
	Loss    *float64 `json:"loss,omitempty"`
	ValLoss *float64 `json:"val_loss,omitempty"`
}

// BTTask is a task's Bradley–Terry scores in rank order, with the
// selection.
type BTTask struct {
	Task   string    `json:"task"`
	Scores []float64 `json:"scores"`
	Train  int       `json:"train"`
	Val    int       `json:"val"`
}

// AuditRow is the aggregated audit of one model's rollout episodes:
// behaviours as k of N episodes, guard counts summed, the grader's pass
// rate (ground truth) beside the external judges' preference.
type AuditRow struct {
	Model                string   `json:"model"`
	G                    *int     `json:"g,omitempty"`
	N                    int      `json:"n"`
	Audited              int      `json:"audited"` // episodes whose audit could be computed
	Delegation           int      `json:"delegation"`
	CodeHandoff          int      `json:"code_handoff"`
	WorkerRevision       int      `json:"worker_revision"`
	OrchestratorRevision int      `json:"orchestrator_revision"`
	Guards               Guards   `json:"guards"`
	Graded               int      `json:"graded"`
	Passed               int      `json:"passed"`
	PassRate             *float64 `json:"pass_rate"`
	JudgePreference      *float64 `json:"judge_preference"` // external win rate vs the baseline; null for the baseline
	AuditErrors          []string `json:"audit_errors,omitempty"`
	DryRun               bool     `json:"dry_run,omitempty"` // an episode ran massd's scripted dry-run policy
}

// Guards are the guard counts summed over a model's episodes.
type Guards struct {
	ProtectedAttempts   int `json:"protected_path_attempts"`
	ProtectedViolations int `json:"protected_path_violations"`
	HiddenAttempts      int `json:"hidden_path_attempts"`
	ShadowCopies        int `json:"shadow_copies"`
	LoopHalts           int `json:"loop_halts"`
	ShellChangedFiles   int `json:"shell_changed_files"`
}

// TokenRow is one model's token accounting: generated tokens per rollout
// episode, score per output token, and (for a generation) its stored and
// processed supervised tokens from generation.json.
type TokenRow struct {
	Model               string   `json:"model"`
	Episodes            int      `json:"episodes"`
	OutputPerEpisode    float64  `json:"output_tokens_per_episode"`
	PromptPerEpisode    float64  `json:"prompt_tokens_per_episode"`
	MeanScore           *float64 `json:"mean_score"`
	ScorePer1kOutput    *float64 `json:"score_per_1k_output_tokens"`
	StoredSupervised    *int64   `json:"stored_supervised,omitempty"`
	ProcessedSupervised *int64   `json:"processed_supervised,omitempty"`
}

// Stat is one significance test of a candidate against the baseline on
// the grader's scores; Unit says what one sample is.
type Stat struct {
	Model     string   `json:"model"`
	Test      string   `json:"test"`
	Unit      string   `json:"unit"`
	Statistic *float64 `json:"statistic,omitempty"`
	P         *float64 `json:"p"`
	Detail    string   `json:"detail"`
}

// BlindSpot is a pair where external judges preferred the workspace the
// task's grader failed.
type BlindSpot struct {
	Task             string   `json:"task"`
	Index            int      `json:"index"`
	Preferred        string   `json:"preferred"`
	PreferredEpisode string   `json:"preferred_episode"`
	Other            string   `json:"other"`
	OtherEpisode     string   `json:"other_episode"`
	OtherPassed      bool     `json:"other_passed"`
	Judges           []string `json:"judges"` // model@seed of each judge that preferred the failed side
	Of               int      `json:"of"`     // valid external verdicts on the pair
}

// EpisodeLink is one rollout episode.
type EpisodeLink struct {
	Task      string   `json:"task"`
	Model     string   `json:"model"`
	Index     int      `json:"index"`
	Seed      int64    `json:"seed"`
	EpisodeID string   `json:"episode_id"`
	Dir       string   `json:"dir"`
	Exit      string   `json:"exit"`
	Graded    bool     `json:"graded"`
	Passed    bool     `json:"passed"`
	Score     *float64 `json:"score,omitempty"`
	Output    int64    `json:"output_tokens"`
}

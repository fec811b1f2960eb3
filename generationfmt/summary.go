package generationfmt

// Summary is generation.json, also what `massctl generation show --json` prints.
type Summary struct {
	Generation int           `json:"generation"`
	Dir        string        `json:"dir"`
	Model      string        `json:"model"` // the name generation g is registered under
	Parent     string        `json:"parent"`
	Status     string        `json:"status"`
	Error      string        `json:"error,omitempty"`
	Stages     []StageTime   `json:"stages"`
	Tasks      []TaskSummary `json:"tasks"`
	Excluded   []Excluded    `json:"excluded"`
	Dataset    string        `json:"dataset,omitempty"`
	Training   *Training     `json:"training,omitempty"`
	Adapter    string        `json:"adapter"`
	Merged     string        `json:"merged"`
	FP8        string        `json:"fp8,omitempty"`
	Tokens     Tokens        `json:"tokens"`
}

// StageTime is a finished stage and how long it ran (its last run).
type StageTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// Tokens keeps the three counts apart.
type Tokens struct {
	Generated           int64 `json:"generated"`            // every model call of every episode and judgment
	StoredSupervised    int64 `json:"stored_supervised"`    // in the dataset
	ProcessedSupervised int64 `json:"processed_supervised"` // sampled up to the chosen checkpoint
}

// TaskSummary is one task that reached ranking.
type TaskSummary struct {
	ID               string      `json:"id"`
	Episodes         int         `json:"episodes"`   // runs made
	Successful       int         `json:"successful"` // eligible
	Judgments        int         `json:"judgments"`  // valid verdicts
	InvalidJudgments int         `json:"invalid_judgments"`
	Ranking          []RankEntry `json:"ranking"`
	Train            []string    `json:"train"`
	Val              []string    `json:"val"`
}

// RankEntry is one episode's place.
type RankEntry struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	Rank  int     `json:"rank"`
}

// Selection is selection.json: the union over tasks, data build's format.
type Selection struct {
	Train []string `json:"train"`
	Val   []string `json:"val"`
}

// Excluded is a task left out of the generation and why.
type Excluded struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Training is a finished run: the checkpoint with the lowest validation loss.
type Training struct {
	Adapter             string  `json:"adapter"`
	BestStep            int     `json:"best_step"`
	BestValLoss         float64 `json:"best_val_loss"`
	Steps               int     `json:"steps"`
	ProcessedSupervised int64   `json:"processed_supervised"` // up to BestStep
}

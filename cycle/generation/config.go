package generation

import (
	"fmt"
	"log/slog"

	"github.com/mass-dev/mass/cycle/rank"
)

// The paper's numbers.
const (
	DefaultEpisodes    = 18 // teacher episodes per task
	DefaultMinSuccess  = 16 // eligible episodes a task needs (15 train + 1 validation)
	DefaultCap         = 24 // runs per task at most, top-ups included
	DefaultConcurrency = 4  // episodes or judgments at once
	DefaultAttempts    = 3  // tries of a slot whose run returned an error
)

// Config is one generation.
type Config struct {
	// Directive replaces the execution directive of collection episodes
	// when set (the job param "directive").
	Directive string
	G         int    // this generation; the parent's g + 1
	Dir       string // generations/<g>, created if missing
	Parent    Model  // model g−1: executor, judge and the weights trained from
	NewModel  string // name model g is registered under; default "gen-<g>"
	Tasks     []string
	Seed      int64 // collection seeds derive from it (seedOf)
	RankSeed  int64 // ring and judge seeds derive from it; 0: Seed

	Episodes    int // per task (DefaultEpisodes)
	MinSuccess  int // eligible episodes needed (DefaultMinSuccess)
	Cap         int // runs per task at most (DefaultCap)
	Opponents   int // ring neighbours (rank.DefaultOpponents)
	Train, Val  int // selection per task (rank.DefaultTrain, rank.DefaultVal)
	Concurrency int
	Attempts    int
	FP8         bool
	TrainSteps  int // 0: mass-train's default
	Lenient     bool
	Recipe      *Recipe // nil: the defaults

	Splits    Splits // the split guard's source; nil: not checked (tests of the pipeline alone)
	Workflows Workflows
	Runner    Episodes
	Judge     Judge
	Datasets  Datasets
	Trainer   Trainer
	Exporter  Exporter
	Models    Models
	Log       *slog.Logger
	// Progress, if set, hears each stage's numbers as they change; it may
	// be called from several goroutines at once.
	Progress func(Progress)
}

// Defaults fills the zero values.
func (c *Config) Defaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Episodes, DefaultEpisodes)
	def(&c.MinSuccess, DefaultMinSuccess)
	def(&c.Cap, DefaultCap)
	def(&c.Opponents, rank.DefaultOpponents)
	def(&c.Train, rank.DefaultTrain)
	def(&c.Val, rank.DefaultVal)
	def(&c.Concurrency, DefaultConcurrency)
	def(&c.Attempts, DefaultAttempts)
	if c.RankSeed == 0 {
		c.RankSeed = c.Seed
	}
	if c.NewModel == "" {
		c.NewModel = fmt.Sprintf("gen-%d", c.G)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// Validate checks a defaulted config.
func (c *Config) Validate() error {
	switch {
	case c.G < 1:
		return fmt.Errorf("generation %d: must be at least 1 (the base model is 0)", c.G)
	case c.Parent.G != c.G-1:
		return fmt.Errorf("generation %d trains from %s, which is generation %d: g must be the parent's g + 1", c.G, c.Parent.Name, c.Parent.G)
	case c.Dir == "":
		return fmt.Errorf("generation %d has no directory", c.G)
	case c.Workflows == nil || c.Runner == nil || c.Judge == nil || c.Datasets == nil ||
		c.Trainer == nil || c.Exporter == nil || c.Models == nil:
		return fmt.Errorf("generation %d: a part (workflows, episodes, judge, datasets, trainer, exporter, models) is missing", c.G)
	}
	return c.ValidateValues()
}

// ValidateValues checks the settings a job's params set, without the parts
// or the generation's place: what ParseParams checks at submission.
func (c *Config) ValidateValues() error {
	switch {
	case len(c.Tasks) == 0:
		return fmt.Errorf("generation %d has no tasks", c.G)
	case c.Episodes < 1 || c.Cap < c.Episodes:
		return fmt.Errorf("episodes %d and cap %d: need 1 ≤ episodes ≤ cap", c.Episodes, c.Cap)
	case c.MinSuccess < c.Train+c.Val:
		return fmt.Errorf("min success %d is below the selection %d+%d", c.MinSuccess, c.Train, c.Val)
	case c.Opponents <= 0 || c.Opponents%2 != 0:
		return fmt.Errorf("opponents %d must be even and positive", c.Opponents)
	case c.Concurrency < 1 || c.Attempts < 1:
		return fmt.Errorf("concurrency %d and attempts %d must be positive", c.Concurrency, c.Attempts)
	}
	seen := map[string]bool{}
	for _, t := range c.Tasks {
		if seen[t] {
			return fmt.Errorf("task %s listed twice", t)
		}
		seen[t] = true
	}
	return nil
}

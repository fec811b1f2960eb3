// Package services is what massd gives every job kind: one Services value,
// implemented once by the composition root (package daemon) and passed to
// each kind's constructor (search.Kind(svc), generation.Kind(svc), …). A
// kind wires itself from it; the daemon holds no per-kind glue.
package services

import (
	"context"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/taskspec"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// Services is massd's side of every job kind. Its methods are safe for
// concurrent use by the jobs that run at once; a kind never closes what it
// gets (massd closes it after the jobs drained).
//
// It is made of small parts. The episode kind needs only episode.Host and
// the train kind only trainjob.Runner; both are declared in their own
// packages, so neither agents/ nor trainer/ import this one, and Services
// embeds them. The loop and evaluation kinds (cycle/…) take all of it.
type Services interface {
	// Host is the episode environment (sandbox runtime, model registry,
	// default model, data directory) and RuntimeUp, the one check that the
	// sandbox runtime answers ("sandbox runtime: …" when it does not).
	episode.Host
	// Runner is the one way to run mass-train (trainjob.Command: the child
	// lock, the parent-death signal, the stop grace) with massd's binary.
	trainjob.Runner
	Models
	// Layout is massd's data directory.
	Layout() datadir.Layout
	// Episodes is the episode runner of one job once the sandbox runtime
	// answers (RuntimeUp): its episodes are the job's children. job names
	// the owner: its ID, its TaskID (the task of the rows it closes) and
	// its WorkDir (judge workspaces and the judges file, whose judge
	// episodes an interrupted attempt cut off are closed here).
	Episodes(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) (Episodes, error)
}

// Episodes runs the child episodes of one job.
type Episodes interface {
	// Run runs one episode; o names its id, task, model, seed and any
	// workflow, and Run fills in the job, the spec (unless o has one), the
	// directive and teacher prompt a query template makes, and the
	// directory. The episode's own error comes back wrapped with its id.
	Run(ctx context.Context, o episode.Options) (episode.Status, error)
	// Close settles an episode an interrupted attempt cut off
	// (episode.CloseInterrupted): a finished one keeps its status.
	Close(ctx context.Context, id string) error
	// RunJudge runs one judge-agent episode on task spec: both workspaces
	// become the judge's read-only inputs at judge/A and judge/B.
	RunJudge(ctx context.Context, spec *taskspec.Spec, req judge.AgentRequest) (judge.AgentAnswer, error)
}

// Models is what the kinds ask of massd's models beyond the registry
// (EpisodeEnv().Models): the external judges, prices and the generations.
type Models interface {
	// IsJudge says whether name is one of massd's external judges (the
	// judges section), which the loop kinds keep out (NotJudge).
	IsJudge(name string) bool
	// Judges are the configured external judges, in massd.yaml's order.
	Judges() []Judge
	// Prices are the models' API prices by model name.
	Prices() map[string]model.Price
	// ParentModel is model g−1 by name: a registered generation, or a
	// configured entry or the scripted model (g = 0).
	ParentModel(ctx context.Context, name string) (Model, error)
	// RegisterModel records generation m, made by job jobID, and serves it
	// as its root entry says. It is idempotent.
	RegisterModel(ctx context.Context, jobID string, m Model) error
}

// Judge is one external judge and its seeds.
type Judge struct {
	Model string
	Seeds []int64
}

// Model is a model massd knows: the parent of a generation or a new one
// (generation.Model).
type Model struct {
	Name      string `json:"name"`
	G         int    `json:"g"`
	Parent    string `json:"parent,omitempty"`
	Weights   string `json:"weights"`
	Tokenizer string `json:"tokenizer"`
	Adapter   string `json:"adapter,omitempty"`
}

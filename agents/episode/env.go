package episode

import (
	"context"
	"log/slog"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/sandbox"
)

// Env is what massd's composition root (package daemon) builds once and
// hands every job kind that runs episodes: this package's "episode" kind
// and the kinds built on it (search, generations). The parts are shared and
// safe for concurrent use; the composition root closes them at shutdown,
// after every job has returned, so a kind must not close them itself.
// The episode runner is Run(ctx, env.Deps(), Options{...}); an episode's
// directory is env.Layout.Episode(id).
type Env struct {
	Runtime      sandbox.Runtime // opened on first use; see sandbox.Lazy
	Models       *model.Registry // configured endpoints plus the scripted dry-run model
	DefaultModel string          // model a job gets when it names none; "" if it must choose
	Layout       datadir.Layout  // the data directory
	Log          *slog.Logger
	Image        string         // sandbox image; empty means the runtime default
	Policy       sandbox.Policy // zero means sandbox.DefaultPolicy()
}

// Deps returns the dependencies of one episode run from the environment.
func (e Env) Deps() Deps {
	return Deps{
		Runtime: e.Runtime, Models: e.Models.Client, DryRun: e.Models.DryRun, DaemonID: e.Layout.SandboxDaemonID(),
		Image: e.Image, Policy: e.Policy, Log: e.Log,
	}
}

// Kind returns the "episode" job kind running in this environment.
func (e Env) Kind() jobkind.Kind { return NewKind(e.Deps(), e.DefaultModel) }

// Host is what the episode kind needs from massd (services.Services
// embeds it): the episode environment, and RuntimeUp, which fails
// ("sandbox runtime: …") while the sandbox runtime cannot be opened.
type Host interface {
	EpisodeEnv() Env
	RuntimeUp(ctx context.Context) error
}

// Kind is the "episode" job kind on h. It fails before it starts anything
// when the sandbox runtime cannot be opened (Docker down), so no half-made
// record is left.
func Kind(h Host) jobkind.Kind {
	k := h.EpisodeEnv().Kind()
	run := k.Run
	k.Run = func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		if err := h.RuntimeUp(ctx); err != nil {
			return err
		}
		return run(ctx, job, rep)
	}
	return k
}

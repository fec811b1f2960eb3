package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/kubernetes"
	"github.com/mass-dev/mass/trainer/trainjob"
)

// Builtins are the long-lived parts massd builds once from its
// configuration and shares among its job kinds: the sandbox runtime (Docker,
// opened on first use so that massd starts while Docker is down), the model
// registry (the configured endpoints and the scripted dry-run model served
// on loopback) and the episode environment built on both. This is the only
// place that knows the concrete runtime and reads the models section;
// domain packages get interfaces and plain values. Close releases it all.
type Builtins struct {
	Layout  datadir.Layout
	Runtime *sandbox.Lazy
	Models  *model.Registry
	Env     episode.Env // what episode-running kinds receive

	cfg    *config.Config
	log    *slog.Logger
	dry    *scripted.Server // nil when a configured model took its name
	gens   generations
	engine engineProbe
}

// NewBuiltins builds massd's shared parts from cfg.
func NewBuiltins(cfg *config.Config, log *slog.Logger) (*Builtins, error) {
	if log == nil {
		log = slog.Default()
	}
	elog := log.With("component", "episode")
	b := &Builtins{Layout: datadir.New(cfg.DataDir), cfg: cfg, log: log}
	models, def, dry, err := buildModels(cfg, elog)
	if err != nil {
		return nil, err
	}
	b.Models, b.dry = models, dry
	pol := sandbox.DefaultPolicy()
	if cfg.Sandbox.Runtime != "" {
		pol.Runtime = cfg.Sandbox.Runtime
	}
	dcfg := docker.Config{DaemonID: b.Layout.SandboxDaemonID(), HelperPath: cfg.Sandbox.Helper,
		Image: cfg.Sandbox.Image, Policy: pol, Strict: cfg.Sandbox.Strict, Logger: elog,
		Egress: docker.EgressConfig{ProxyPath: docker.FindEgressProxy(cfg.Sandbox.Helper)},
		GPU:    docker.GPUConfig{Max: cfg.Sandbox.MaxGPUs, LibDirs: cfg.Sandbox.GPULibDirs}}
	b.Runtime = sandbox.NewLazy("docker", func(ctx context.Context) (sandbox.Runtime, error) {
		return docker.New(ctx, dcfg)
	})
	image := cfg.Sandbox.Image
	if cfg.Sandbox.Backend == "kubernetes" {
		kcfg := kubernetesConfig(cfg, b.Layout.SandboxDaemonID(), pol, elog)
		b.Runtime = sandbox.NewLazy("kubernetes", func(ctx context.Context) (sandbox.Runtime, error) {
			return kubernetes.New(ctx, kcfg)
		})
		image = kcfg.Image
	}
	b.Env = episode.Env{Runtime: b.Runtime, Models: models, DefaultModel: def, Layout: b.Layout, Log: elog,
		Image: image, Policy: pol}
	return b, nil
}

// buildModels makes the registry of the configured models plus the scripted
// dry-run model, unless a configured model took its name, and picks the
// default: the only configured model, or scripted when none is configured.
func buildModels(cfg *config.Config, log *slog.Logger) (*model.Registry, string, *scripted.Server, error) {
	var cfgs []model.Config
	for _, name := range slices.Sorted(maps.Keys(cfg.Models)) {
		cfgs = append(cfgs, ModelConfig(name, cfg.Models[name]))
	}
	reg := model.NewRegistry(cfgs, log)
	def := ""
	switch len(cfgs) {
	case 0:
		def = scripted.Name
	case 1:
		def = cfgs[0].Name
	}
	var free []string // scripted names no configured model took
	for _, n := range scripted.Names {
		if !reg.Has(n) {
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		return reg, def, nil, nil
	}
	srv, err := scripted.Start()
	if err != nil {
		return nil, "", nil, fmt.Errorf("start the scripted dry-run model: %w", err)
	}
	for _, n := range free {
		c, err := model.New(srv.ConfigFor(n), log)
		if err != nil {
			srv.Close()
			return nil, "", nil, fmt.Errorf("scripted dry-run model client: %w", err)
		}
		reg.Add(n, c, true)
	}
	log.Info("dry-run models available", "models", strings.Join(free, ","), "endpoint", srv.URL())
	return reg, def, srv, nil
}

// ModelConfig is the client configuration of the entry name of massd's
// `models` section, with the defaults filled in.
func ModelConfig(name string, m *config.Model) model.Config {
	c := *m
	c.Name = name
	return c.WithDefaults()
}

// Kinds are the job kinds this massd runs, each constructed from the
// builtins' one Services value (Services); a kind wires itself from it.
// Owners add theirs here, one line each.
func (b *Builtins) Kinds() []jobkind.Kind {
	s := b.Services()
	return []jobkind.Kind{
		jobs.WaitKind(),
		trainjob.Kind(s),
		episode.Kind(s),
		search.Kind(s),
		generation.Kind(s),
		generation.CycleKind(s),
		rollout.Kind(s),
		judgepairs.Kind(s),
	}
}

// ReapOrphans removes every container and volume that an earlier massd with
// this data directory left behind, then closes every episode it cut off
// (episode.CloseOrphans: run_status.json, the store row and the event,
// through rec). It is meant for start-up, before any job resumes (nothing
// of this massd is live yet); without Docker the episodes are closed all
// the same.
func (b *Builtins) ReapOrphans(ctx context.Context) error {
	return b.Recover(ctx, nil, func(string, int) {})
}

// Recover is start-up recovery (a ReapFunc): ReapOrphans with the store's
// side of the episodes cut off (their rows and events, through rec) and
// the stage told to healthz.
func (b *Builtins) Recover(ctx context.Context, rec jobkind.Recovery, stage func(string, int)) error {
	stage(StageReapSandboxes, 0)
	var errs []error
	if rt, err := b.Runtime.Get(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sandbox runtime: %w", err))
	} else {
		n, err := rt.ReapOrphans(ctx, func(string) bool { return false })
		if n > 0 {
			b.log.Info("reaped sandboxes left by an earlier massd", "count", n)
		}
		errs = append(errs, err)
	}
	var running []jobkind.EpisodeRecord
	if rec != nil {
		r, err := rec.RunningEpisodes(ctx)
		running = r
		errs = append(errs, err)
	}
	stage(StageCloseEpisodes, len(running))
	d := b.Env.Deps()
	d.CleanupBudget = time.Second // the reap above has just run
	closed, err := episode.CloseOrphans(ctx, d, b.Env.Layout, rec, running)
	if closed > 0 {
		b.log.Info("closed episodes cut off by a crash", "count", closed)
	}
	return errors.Join(append(errs, err)...)
}

// ReapPeriodically removes, until ctx ends, the sandboxes that episodes'
// cleanup left while the engine was unreachable (episode.Reap), once the
// runtime has been opened; before that there is nothing of this massd's.
func (b *Builtins) ReapPeriodically(ctx context.Context, interval time.Duration) {
	episode.Reap(ctx, openedOnly{b.Runtime}, interval, b.log)
}

// openedOnly reaps only through a runtime that is already open, so a
// massd without Docker does not retry opening it every interval.
type openedOnly struct{ *sandbox.Lazy }

func (o openedOnly) ReapOrphans(ctx context.Context, live func(string) bool) (int, error) {
	if !o.Opened() {
		return 0, nil
	}
	return o.Lazy.ReapOrphans(ctx, live)
}

// Close releases the runtime and stops the scripted model. Call it after the
// job manager has drained: running episodes use both. It reaps what is left
// of this massd's sandboxes first (the drain has ended every episode).
func (b *Builtins) Close() error {
	if b.Runtime.Opened() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if _, err := b.Runtime.ReapOrphans(ctx, episode.Running); err != nil {
			b.log.Warn("reap sandboxes at shutdown; the next start reaps them", "err", err)
		}
		cancel()
	}
	b.stopServing()
	b.engine.close()
	err := b.Runtime.Close()
	if b.dry != nil {
		err = errors.Join(err, b.dry.Close())
	}
	return err
}

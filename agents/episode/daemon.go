package episode

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
)

// SandboxDaemonID is the stable mass.daemon label of the sandboxes a massd
// with this data directory creates, so that a restarted massd finds (and
// reaps) what its predecessor left.
func SandboxDaemonID(dataDir string) string {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return "massd-" + hex.EncodeToString(sum[:6])
}

// ModelConfig converts one entry of massd's `models` section.
func ModelConfig(name string, m *config.Model) model.Config {
	c := model.Config{Name: name, BaseURL: m.BaseURL, Model: m.Model, APIKeyEnv: m.APIKeyEnv, APIKeyFile: m.APIKeyFile,
		MaxConcurrency: m.MaxConcurrency, Timeout: m.Timeout, Temperature: m.Temperature, TopP: m.TopP, TopK: m.TopK,
		EnableThinking: m.EnableThinking, Stream: m.Stream, MaxResponseBytes: m.MaxResponseBytes}
	if m.MaxTokens != nil {
		c.MaxTokens = *m.MaxTokens
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = config.DefaultModelConc
	}
	if c.Timeout == 0 {
		c.Timeout = config.DefaultModelTimeout
	}
	return c
}

// FromConfig returns the "episode" job kind wired from massd's
// configuration: the Docker sandbox runtime, the configured models, and the
// built-in dry-run model "scripted" served on loopback. Everything is set up
// on the first episode, so a massd without Docker still starts.
func FromConfig(cfg *config.Config, log *slog.Logger) jobs.Kind {
	w := &wiring{cfg: cfg, log: log}
	k := NewKind(Deps{}, "")
	k.Run = func(ctx context.Context, job jobs.Job, rep jobs.Reporter) error {
		d, def, err := w.deps(ctx)
		if err != nil {
			return err
		}
		return runJob(ctx, d, def, job, rep)
	}
	return k
}

type wiring struct {
	cfg *config.Config
	log *slog.Logger

	mu  sync.Mutex
	d   *Deps
	def string
}

func (w *wiring) deps(ctx context.Context) (Deps, string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.d != nil {
		return *w.d, w.def, nil
	}
	log := w.log
	if log == nil {
		log = slog.Default()
	}
	log = log.With("component", "episode")
	clients := map[string]model.Client{}
	for _, name := range slices.Sorted(maps.Keys(w.cfg.Models)) {
		c, err := model.New(ModelConfig(name, w.cfg.Models[name]), log)
		if err != nil {
			return Deps{}, "", fmt.Errorf("model %s: %w", name, err)
		}
		clients[name] = c
	}
	def := ""
	switch len(clients) {
	case 0:
		def = scripted.Name
	case 1:
		for n := range clients {
			def = n
		}
	}
	var dry *scripted.Server
	if _, taken := clients[scripted.Name]; !taken {
		srv, err := scripted.Start()
		if err != nil {
			return Deps{}, "", fmt.Errorf("start the scripted dry-run model: %w", err)
		}
		c, err := model.New(srv.Config(), log)
		if err != nil {
			srv.Close()
			return Deps{}, "", fmt.Errorf("scripted dry-run model client: %w", err)
		}
		clients[scripted.Name] = c
		dry = srv
		log.Info("dry-run model available", "model", scripted.Name, "endpoint", srv.URL())
	}
	pol := sandbox.DefaultPolicy()
	if w.cfg.Sandbox.Runtime != "" {
		pol.Runtime = w.cfg.Sandbox.Runtime
	}
	rt, err := docker.New(ctx, docker.Config{DaemonID: SandboxDaemonID(w.cfg.DataDir), HelperPath: w.cfg.Sandbox.Helper,
		Image: w.cfg.Sandbox.Image, Policy: pol, Strict: w.cfg.Sandbox.Strict, Logger: log})
	if err != nil {
		if dry != nil {
			dry.Close() // the next episode starts a fresh one; don't leak this one
		}
		return Deps{}, "", fmt.Errorf("sandbox runtime: %w", err)
	}
	names := slices.Sorted(maps.Keys(clients))
	d := Deps{
		Runtime: rt, DaemonID: SandboxDaemonID(w.cfg.DataDir), Image: w.cfg.Sandbox.Image, Policy: pol, Log: log,
		Models: func(name string) (model.Client, error) {
			if name == "" {
				return nil, fmt.Errorf("several models are configured (%s): choose one with --model", strings.Join(names, ", "))
			}
			c, ok := clients[name]
			if !ok {
				return nil, fmt.Errorf("no model named %q; configured: %s", name, strings.Join(names, ", "))
			}
			return c, nil
		},
		DryRun: func(name string) bool { return name == scripted.Name },
	}
	w.d, w.def = &d, def
	return d, def, nil
}

// Reaper returns a start-up hook for daemon.Options.ReapOrphans: it removes
// every container and volume that an earlier massd with this data
// directory left behind (nothing is live before jobs resume).
func Reaper(cfg *config.Config, log *slog.Logger) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		rt, err := docker.New(ctx, docker.Config{DaemonID: SandboxDaemonID(cfg.DataDir), HelperPath: cfg.Sandbox.Helper,
			Image: cfg.Sandbox.Image, Logger: log})
		if err != nil {
			return fmt.Errorf("sandbox runtime: %w", err)
		}
		defer rt.Close()
		n, err := rt.ReapOrphans(ctx, func(string) bool { return false })
		if n > 0 && log != nil {
			log.Info("reaped sandboxes left by an earlier massd", "count", n)
		}
		return err
	}
}

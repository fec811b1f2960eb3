// Package app implements mass-train's command line (train, eval, export,
// merge, init-model, toy-data, bench) on top of the trainer packages;
// cmd/mass-train only calls New.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer"
	"github.com/urfave/cli/v2"
)

// Options are what a binary built on this package brings: the compute
// backends linked into it and the name --backend defaults to.
type Options struct {
	Backends map[string]trainer.Factory
	Default  string
	// Place, when set, returns the name and factory of a backend spread over devices as
	// replicas data-parallel pipelines (--devices, --replicas; the CUDA build's).
	Place func(devices []int, replicas int) (string, trainer.Factory, error)
}

// New returns the mass-train application with the backends of opt.
func New(version string, opt Options) *cli.App {
	r := &runner{opt: opt}
	return &cli.App{
		Name:    "mass-train",
		Usage:   "LoRA SFT of Qwen2/Qwen2.5/Qwen3 dense models and the Qwen3.5/3.6 hybrid on MASS windows",
		Version: version,
		Before:  func(*cli.Context) error { setMemoryLimit(); return nil },
		Commands: []*cli.Command{
			r.trainCommand(), r.evalCommand(), exportCommand(), mergeCommand(),
			initModelCommand(), toyDataCommand(), r.benchCommand(), r.benchTrainCommand(), inspectModelCommand(),
		},
	}
}

// runner carries the options into the commands that compute.
type runner struct{ opt Options }

// signalContext is cancelled by the first SIGINT/SIGTERM (the loop then
// checkpoints and stops); a second signal exits at once.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ch
		slog.Warn("signal: stopping after the current step (send again to exit now)")
		cancel()
		<-ch
		os.Exit(130)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// names lists the built-in backends.
func (r *runner) names() []string {
	names := make([]string, 0, len(r.opt.Backends))
	for n := range r.opt.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (r *runner) backendFlag() cli.Flag {
	names := r.names()
	return &cli.StringFlag{Name: "backend", Value: r.opt.Default, EnvVars: []string{"MASS_TRAIN_BACKEND"},
		Usage: "compute backend (built in: " + strings.Join(names, ", ") + ")"}
}

func (r *runner) pickBackend(name string) (trainer.Factory, error) {
	f, ok := r.opt.Backends[name]
	if !ok {
		return nil, errclass.Mark(fmt.Errorf("backend %q is not built into this binary (a CUDA build needs -tags masscuda; this one has %s)", name, strings.Join(r.names(), ", ")), errclass.ErrNotFound)
	}
	return f, nil
}

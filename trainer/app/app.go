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
	"syscall"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/cpu"
	"github.com/urfave/cli/v2"
)

// Backends are the compute backends built into this binary. A CUDA build
// registers its backend from an init function (cmd/mass-train/cuda.go, tag masscuda).
var Backends = map[string]trainer.Factory{cpu.Name: cpu.New}

// DefaultBackend is --backend's default; a CUDA build sets it to its backend.
var DefaultBackend = cpu.Name

// New returns the mass-train application.
func New(version string) *cli.App {
	return &cli.App{
		Name:    "mass-train",
		Usage:   "LoRA SFT of Qwen2/Qwen2.5/Qwen3 dense models on MASS windows",
		Version: version,
		Commands: []*cli.Command{
			trainCommand(), evalCommand(), exportCommand(), mergeCommand(),
			initModelCommand(), toyDataCommand(), benchCommand(),
		},
	}
}

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

func backendFlag() cli.Flag {
	names := ""
	for n := range Backends {
		names += n + " "
	}
	return &cli.StringFlag{Name: "backend", Value: DefaultBackend, EnvVars: []string{"MASS_TRAIN_BACKEND"}, Usage: "compute backend (built in: " + names + ")"}
}

func pickBackend(name string) (trainer.Factory, error) {
	f, ok := Backends[name]
	if !ok {
		return nil, fmt.Errorf("backend %q is not built into this binary (a CUDA build needs -tags masscuda)", name)
	}
	return f, nil
}

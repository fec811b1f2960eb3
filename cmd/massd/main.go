// Command massd is the MASS daemon: it runs jobs (episodes, training) and
// serves the HTTP API that massctl uses. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/trainer/trainjob"
)

var version = "dev"

func main() {
	flags := config.NewFlags("massd")
	if err := flags.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if flags.Version {
		fmt.Println(version)
		return
	}
	cfg, err := config.Load(flags, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "massd:", err)
		os.Exit(2)
	}
	log := daemon.NewLogger(cfg.Log, os.Stderr)

	// The job kinds this massd runs. Owners add theirs here, one line each.
	wiring := episode.NewWiring(cfg, log)
	kinds := []jobs.Kind{
		jobs.WaitKind(),
		trainjob.Kind(trainjob.PickBinary(cfg.Trainer.Binary, cfg.Trainer.CUDABinary)),
		episode.KindFrom(wiring),
		daemon.SearchKind(wiring),
	}

	// First SIGINT/SIGTERM drains; a second one exits at once.
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		log.Warn("second signal: exiting without draining")
		os.Exit(1)
	}()

	err = daemon.Run(ctx, daemon.Options{
		Config:  cfg,
		Version: version,
		Kinds:   kinds,
		Logger:  log,
		// Containers and volumes left by a crashed massd are reaped at start.
		ReapOrphans: episode.Reaper(cfg, log),
	})
	if err != nil {
		log.Error("massd", "err", err)
		os.Exit(1)
	}
}

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

	"github.com/mass-dev/mass/daemon"
	"github.com/mass-dev/mass/daemon/config"
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

	// The shared parts (sandbox runtime, models, the kinds using them) are
	// built once; the daemon closes them after draining.
	builtins, err := daemon.NewBuiltins(cfg, log)
	if err != nil {
		log.Error("massd", "err", err)
		os.Exit(1)
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

	// Containers and volumes left by a crashed massd are reaped at start.
	err = daemon.Run(ctx, daemon.Options{Config: cfg, Version: version, Builtins: builtins, Logger: log})
	if err != nil {
		log.Error("massd", "err", err)
		os.Exit(1)
	}
}

// Command massctl is the command-line client of massd. See `massctl help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mass-dev/mass/cli"
)

var version = "dev"

func main() {
	// Ctrl-C cancels the command's context, so a command can say what it
	// leaves behind (a followed job keeps running); a second one kills.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	err := cli.App(version).RunContext(ctx, os.Args)
	stop()
	if err != nil {
		if msg := cli.Explain(err); msg != "" {
			fmt.Fprintln(os.Stderr, "massctl:", msg)
		}
		os.Exit(cli.ExitCode(err))
	}
}

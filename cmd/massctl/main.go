// Command massctl is the command-line client of massd. See `massctl help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	urfave "github.com/urfave/cli/v2"

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
		fmt.Fprintln(os.Stderr, "massctl:", cli.Explain(err))
		code := 1
		var ec urfave.ExitCoder
		if errors.As(err, &ec) && ec.ExitCode() > 0 {
			code = ec.ExitCode()
		}
		os.Exit(code)
	}
}

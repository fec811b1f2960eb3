// Command massctl is the command-line client of massd. See `massctl help`.
package main

import (
	"errors"
	"fmt"
	"os"

	urfave "github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cli"
)

var version = "dev"

func main() {
	if err := cli.App(version).Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "massctl:", cli.Explain(err))
		code := 1
		var ec urfave.ExitCoder
		if errors.As(err, &ec) && ec.ExitCode() > 0 {
			code = ec.ExitCode()
		}
		os.Exit(code)
	}
}

// Command mass-train trains, evaluates, exports and merges LoRA adapters for
// MASS; see trainer/app for the commands.
package main

import (
	"fmt"
	"os"

	"github.com/mass-dev/mass/trainer/app"
)

var version = "dev"

func main() {
	if err := app.New(version, backends()).Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "mass-train:", err)
		os.Exit(1)
	}
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/daemon/config"
)

// socketPath is the --socket flag (or MASS_SOCKET), else the default path.
func socketPath(c *cli.Context) string {
	if s := c.String("socket"); s != "" {
		return s
	}
	return config.DefaultSocket()
}

// clientFrom returns a client for the massd named by --socket / MASS_SOCKET.
// It does not connect; the first call does. Command files use it for every
// daemon request.
func clientFrom(c *cli.Context) *client.Client {
	return client.New(socketPath(c))
}

// jsonFlag is the --json flag every read command takes.
func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"}
}

// printJSON writes v as indented JSON to the command's output.
func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Explain turns an error from a command into the message massctl prints,
// adding how to start massd when none is running.
func Explain(err error) string {
	if errors.Is(err, client.ErrNoDaemon) {
		return fmt.Sprintf("%v\n  start it with:  massd --socket SOCKET --data-dir DIR &\n  or point massctl at a running one with --socket PATH or MASS_SOCKET", err)
	}
	return err.Error()
}

package cli

import "github.com/urfave/cli/v2"

// auditCommand is a placeholder until its owner lands the real command.
func auditCommand() *cli.Command {
	return &cli.Command{Name: "audit", Usage: "(not yet implemented)"}
}

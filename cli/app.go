// Package cli implements massctl's commands on top of the typed daemon client
// (daemon/client) and the local libraries; it does no HTTP of its own.
package cli

import (
	"github.com/urfave/cli/v2"
)

// App returns massctl. Each command group lives in its own file.
func App(version string) *cli.App {
	return &cli.App{
		Name:                 "massctl",
		Usage:                "submit tasks to massd, watch jobs, read results and audits",
		Version:              version,
		EnableBashCompletion: true,
		// Errors go back to main, which prints them with Explain and exits.
		ExitErrHandler: func(*cli.Context, error) {},
		Flags: []cli.Flag{
			&cli.StringFlag{
				Name:    "socket",
				Usage:   "massd unix socket `PATH`",
				EnvVars: []string{"MASS_SOCKET"},
			},
		},
		Commands: []*cli.Command{
			statusCommand(),
			versionCommand(version),
			taskCommand(),
			jobCommand(),
			episodeCommand(),
			modelCommand(),
			uiCommand(),
			runCommand(),
			searchCommand(),
			workflowCommand(),
			auditCommand(),
			sandboxCommand(),
			imageCommand(),
			dataCommand(),
			trainCommand(),
			rankCommand(),
			generationCommand(),
			cycleCommand(),
			evalCommand(),
			reportCommand(),
			completionCommand(),
		},
	}
}

package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func modelCommand() *cli.Command {
	return &cli.Command{
		Name:  "model",
		Usage: "see the models massd can call",
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list the configured models (no secrets)", Flags: []cli.Flag{jsonFlag()}, Action: modelList},
		},
	}
}

func modelList(c *cli.Context) error {
	ms, err := clientFrom(c).Models(c.Context)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, ms)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "NAME\tMODEL\tENDPOINT\tDEFAULT\tSTATE")
	for _, m := range ms {
		state := "ok"
		switch {
		case m.Error != "":
			state = "broken: " + plainText(m.Error)
		case m.DryRun:
			state = "dry run (scripted, on loopback)"
		}
		def := ""
		if m.Default {
			def = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, dash(m.Model), dash(m.BaseURL), def, state)
	}
	return tw.Flush()
}

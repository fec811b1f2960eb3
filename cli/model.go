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
			{Name: "test", Usage: "send a model one small request offering a tool: reachability, model id, tool calls, latency",
				ArgsUsage: "NAME", Flags: []cli.Flag{jsonFlag()}, Action: modelTest},
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
	fmt.Fprintln(tw, "NAME\tMODEL\tENDPOINT\tDEFAULT\tSTATE\tSERVES")
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, dash(m.Model), dash(m.BaseURL), def, state, dash(plainText(m.Serves)))
	}
	return tw.Flush()
}

func modelTest(c *cli.Context) error {
	name, err := oneArg(c, "model NAME")
	if err != nil {
		return err
	}
	res, err := clientFrom(c).TestModel(c.Context, name)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if err := printJSON(c, res); err != nil {
			return err
		}
	} else {
		w := c.App.Writer
		fmt.Fprintf(w, "model:      %s (id %s)\n", res.Name, dash(res.Model))
		if !res.OK {
			fmt.Fprintf(w, "reachable:  no: %s\n", plainText(res.Error))
		} else {
			fmt.Fprintf(w, "reachable:  yes, %.0f ms, %d attempt(s), %d tokens\n", res.LatencyMS, res.Attempts, res.Tokens)
			fmt.Fprintf(w, "tool calls: %v\n", res.ToolCalls)
			if res.Reply != "" {
				fmt.Fprintf(w, "reply:      %s\n", plainText(res.Reply))
			}
		}
	}
	if !res.OK {
		return cli.Exit("", 1)
	}
	return nil
}

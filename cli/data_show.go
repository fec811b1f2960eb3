package cli

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

func dataShowCommand(tokFlag cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print one window of a dataset as text, supervised spans between «» marks",
		ArgsUsage: "DATASET-DIR INDEX",
		Flags:     []cli.Flag{tokFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return fmt.Errorf("data show needs DATASET-DIR and a window INDEX (0-based, in file order)")
			}
			var idx int
			if _, err := fmt.Sscan(c.Args().Get(1), &idx); err != nil || idx < 0 {
				return fmt.Errorf("window index %q is not a non-negative integer", c.Args().Get(1))
			}
			tok, err := tokenizer.Load(c.String("tokenizer"))
			if err != nil {
				return err
			}
			rows, _, err := sft.ReadDataset(c.Args().Get(0))
			if err != nil {
				return err
			}
			if idx >= len(rows) {
				return fmt.Errorf("window %d out of range: the dataset has %d", idx, len(rows))
			}
			r := rows[idx]
			fmt.Fprintf(c.App.Writer, "task %s episode %s thread %s (%s) segment %d window %d: %d tokens, %d supervised\n\n",
				r.Task, r.Episode, r.Thread, r.Role, r.Segment, r.Window, r.NTokens, r.NLossTokens)
			var sb strings.Builder
			for start := 0; start < len(r.InputIDs); {
				sup := r.Labels[start] != sft.IgnoreIndex
				end := start
				for end < len(r.InputIDs) && (r.Labels[end] != sft.IgnoreIndex) == sup {
					end++
				}
				text, err := tok.Decode(r.InputIDs[start:end])
				if err != nil {
					return err
				}
				if sup {
					text = "«" + text + "»"
				}
				sb.WriteString(text)
				start = end
			}
			fmt.Fprintln(c.App.Writer, sb.String())
			return nil
		},
	}
}

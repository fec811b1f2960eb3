package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/taskspec/refimport"
)

func taskImportCommand() *cli.Command {
	d := refimport.DefaultLimits
	return &cli.Command{
		Name:      "import-reference",
		Usage:     "turn a reference-layout task set (SakanaAI/mass tasks/) into task specs (no daemon needed)",
		ArgsUsage: "DIR",
		Description: "DIR is the reference's tasks/ folder (splits.json, bare/query{q}.txt, initial/query{q}_ourTeam.txt,\n" +
			"teacher_directive.txt) or a checkout holding it. Writes OUT/query{q}/ with task.yaml, prompt.txt (the bare\n" +
			"query byte for byte), workflow.txt (the initial design) and directive.txt, validates every spec, and\n" +
			"reports what has no mass equivalent. Nothing is written when any task is unusable.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "folder to write the task folders into (created; existing task folders are refused)"},
			&cli.StringFlag{Name: "episode-wall-time", Value: d.EpisodeWallTime, Usage: "limits.episode_wall_time of every task"},
			&cli.IntFlag{Name: "agent-turns", Value: d.AgentTurns, Usage: "limits.agent_turns of every task"},
			&cli.Float64Flag{Name: "cpus", Value: d.CPUs, Usage: "limits.cpus of every task"},
			&cli.StringFlag{Name: "memory", Value: d.Memory, Usage: "limits.memory_bytes of every task"},
			&cli.StringFlag{Name: "image", Usage: "image profile of every task (`PROFILE`: base, research or one built with `massctl image build --profile FILE`)"},
			jsonFlag(),
		},
		Action: taskImportReference,
	}
}

func taskImportReference(c *cli.Context) error {
	dir, err := oneArg(c, "reference task folder DIR")
	if err != nil {
		return err
	}
	if c.String("out") == "" {
		return usageError("task import-reference needs --out DIR2, the folder to write the task folders into")
	}
	lim := refimport.Limits{EpisodeWallTime: c.String("episode-wall-time"), AgentTurns: c.Int("agent-turns"),
		CPUs: c.Float64("cpus"), Memory: c.String("memory"), Image: c.String("image")}
	rep, err := refimport.Import(dir, c.String("out"), lim)
	if err != nil {
		return fmt.Errorf("import %s: %w", dir, err)
	}
	if c.Bool("json") {
		return printJSON(c, rep)
	}
	rep.Print(c.App.Writer)
	return nil
}

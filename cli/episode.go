package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/daemon/client"
)

func episodeCommand() *cli.Command {
	idArg := "ID"
	return &cli.Command{
		Name:  "episode",
		Usage: "list, inspect, read and remove recorded episodes",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list episodes, newest first",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "job", Usage: "only episodes of this job `ID`"},
					&cli.StringFlag{Name: "task", Usage: "only episodes of this task `ID`"},
					&cli.StringFlag{Name: "status", Usage: "only episodes with this status (running, completed, failed, cancelled, interrupted)"},
					&cli.IntFlag{Name: "limit", Value: 50, Usage: "at most this many"},
					jsonFlag(),
				},
				Action: episodeList,
			},
			{Name: "show", Usage: "show one episode's record and summary", ArgsUsage: idArg, Flags: []cli.Flag{jsonFlag()}, Action: episodeShow},
			{
				Name:      "files",
				Usage:     "list an episode's files, or print one: episode files ID ledger.jsonl",
				ArgsUsage: "ID [NAME]",
				Flags:     []cli.Flag{jsonFlag()},
				Action:    episodeFiles,
			},
			{
				Name:      "transcript",
				Usage:     "print each agent's thread as the model saw it: new messages, reasoning, tool calls, tokens",
				ArgsUsage: idArg,
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "width", Value: DefaultTranscriptWidth, Usage: "cut message lines to `N` characters (0: whole)"},
					&cli.BoolFlag{Name: "reasoning", Usage: "include the model's reasoning"},
					jsonFlag(),
				},
				Action: episodeTranscript,
			},
			{
				Name:      "diff",
				Usage:     "compare two episodes' workspaces: added, removed, changed files and a unified diff of text",
				ArgsUsage: "A B",
				Description: "Reads both workspace.manifest.json files and, for changed text files up to 1 MiB, the files\n" +
					"themselves out of the workspace exports, through massd (never from the host's disk).",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "stat", Usage: "list the files only, no content diff"}, jsonFlag()},
				Action: episodeDiff,
			},
			{
				Name:      "rm",
				Usage:     "remove an episode's exported workspace, keeping its record; --purge removes everything",
				ArgsUsage: idArg,
				Description: "Without --purge only workspace.tar goes (the bulk of the disk); the record, trajectory, ledger,\n" +
					"guards and workspace manifest stay, as the retention setting does. Refused while its job runs.",
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "purge", Usage: "remove the record and every file of the episode"}, jsonFlag()},
				Action: episodeRm,
			},
		},
	}
}

// episodeSummary is the part of an episode job's result the CLI shows.
type episodeSummary struct {
	Exit       string `json:"exit"`
	Success    bool   `json:"success"`
	Failure    string `json:"failure"`
	Reason     string `json:"reason"`
	Model      string `json:"model"`
	DryRun     bool   `json:"dry_run"`
	Agents     int    `json:"agents"`
	ModelCalls int    `json:"model_calls"`
	ToolCalls  int    `json:"tool_calls"`
	Tokens     struct {
		Prompt     int64 `json:"prompt"`
		Completion int64 `json:"completion"`
	} `json:"tokens"`
}

func parseSummary(raw json.RawMessage) (episodeSummary, bool) {
	var s episodeSummary
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return s, false
	}
	return s, true
}

func episodeList(c *cli.Context) error {
	es, err := clientFrom(c).Episodes(c.Context, client.EpisodeFilter{JobID: c.String("job"), TaskID: c.String("task"),
		Status: c.String("status"), Limit: c.Int("limit")})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, es)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "ID\tSTATUS\tSUCCESS\tTASK\tMODEL\tCALLS\tJOB\tCREATED")
	for _, e := range es {
		s, ok := parseSummary(e.Summary)
		success, calls := "-", "-"
		if ok {
			success, calls = fmt.Sprint(s.Success), fmt.Sprint(s.ModelCalls)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Status, success, e.TaskID, dash(s.Model), calls, e.JobID, fmtTime(e.Created))
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func episodeShow(c *cli.Context) error {
	id, err := oneArg(c, "episode ID")
	if err != nil {
		return err
	}
	e, err := clientFrom(c).Episode(c.Context, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, e)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "episode:  %s\nstatus:   %s\ntask:     %s\njob:      %s\ndir:      %s\ncreated:  %s\nupdated:  %s\n",
		e.ID, e.Status, e.TaskID, e.JobID, e.Dir, fmtTime(e.Created), fmtTime(e.Updated))
	if s, ok := parseSummary(e.Summary); ok {
		fmt.Fprintf(w, "exit:     %s (success %v)\n", s.Exit, s.Success)
		if s.Failure != "" || s.Reason != "" {
			fmt.Fprintf(w, "failure:  %s: %s\n", s.Failure, plainText(s.Reason))
		}
		model := s.Model
		if s.DryRun {
			model += " (dry run)"
		}
		fmt.Fprintf(w, "model:    %s\nagents:   %d\ncalls:    %d model, %d tool\ntokens:   %d prompt, %d completion\n",
			model, s.Agents, s.ModelCalls, s.ToolCalls, s.Tokens.Prompt, s.Tokens.Completion)
	}
	return nil
}

func episodeFiles(c *cli.Context) error {
	args, err := positional(c)
	if err != nil {
		return err
	}
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("%s needs an episode ID and optionally a file NAME (see --help)", c.Command.FullName())
	}
	cl := clientFrom(c)
	if len(args) == 2 {
		rc, err := cl.EpisodeFile(c.Context, args[0], args[1])
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.Copy(c.App.Writer, rc)
		return err
	}
	fs, err := cl.EpisodeFiles(c.Context, args[0])
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, fs)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "NAME\tSIZE\tMODIFIED")
	for _, f := range fs {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", f.Name, f.Size, fmtTime(f.Modified))
	}
	return tw.Flush()
}

func episodeRm(c *cli.Context) error {
	id, err := oneArg(c, "episode ID")
	if err != nil {
		return err
	}
	if !c.Bool("purge") {
		r, err := clientFrom(c).RemoveWorkspace(c.Context, id)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return printJSON(c, r)
		}
		if !r.Removed {
			fmt.Fprintf(c.App.Writer, "episode %s has no workspace export; nothing removed (--purge removes the record too)\n", id)
			return nil
		}
		fmt.Fprintf(c.App.Writer, "removed the workspace of episode %s; its record and logs are kept (--purge removes them)\n", id)
		return nil
	}
	e, err := clientFrom(c).RemoveEpisode(c.Context, id)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, e)
	}
	fmt.Fprintf(c.App.Writer, "removed episode %s (task %s, job %s)\n", e.ID, e.TaskID, e.JobID)
	return nil
}

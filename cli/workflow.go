package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/daemon/client"
)

// workflowCommand is `massctl workflow`: read the designs of a task's
// searches. The files are read from massd's data directory, which massctl
// shares on this host (the unix socket implies it).
func workflowCommand() *cli.Command {
	searchFlag := &cli.StringFlag{Name: "search", Usage: "search (job) `ID`; default: the task's latest search"}
	return &cli.Command{
		Name:  "workflow",
		Usage: "list, show and diff the workflow versions of a task's search",
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "list the versions and their verdicts", ArgsUsage: "TASK", Flags: []cli.Flag{searchFlag, jsonFlag()}, Action: workflowList},
			{Name: "show", Usage: "print a version (default: the champion)", ArgsUsage: "TASK [vK]", Flags: []cli.Flag{searchFlag}, Action: workflowShow},
			{Name: "diff", Usage: "unified diff of two versions", ArgsUsage: "TASK vA vB", Flags: []cli.Flag{searchFlag}, Action: workflowDiff},
			{Name: "champion", Usage: "print retained_workflow.json", ArgsUsage: "TASK", Flags: []cli.Flag{searchFlag}, Action: workflowChampion},
		},
	}
}

// searchDir finds the directory of the chosen (or latest) search of task.
func searchDir(c *cli.Context, task string) (string, error) {
	cl := clientFrom(c)
	id := c.String("search")
	var workDir string
	if id != "" {
		j, err := cl.Job(c.Context, id)
		if err != nil {
			return "", err
		}
		task, workDir = j.TaskID, j.WorkDir
	} else {
		js, err := cl.Jobs(c.Context, client.JobFilter{Kind: search.KindName, TaskID: task, Limit: 1})
		if err != nil {
			return "", err
		}
		if len(js) == 0 {
			return "", fmt.Errorf("task %s has no search; run massctl search --task %s", task, task)
		}
		id, workDir = js[0].ID, js[0].WorkDir
	}
	if workDir == "" {
		return "", fmt.Errorf("search %s: massd did not say where its data is", id)
	}
	data := filepath.Dir(filepath.Dir(workDir))
	return filepath.Join(data, search.Dir, task, id), nil
}

func parseVersion(s string) (int, error) {
	k, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || k < 0 {
		return 0, fmt.Errorf("version %q: want vK, e.g. v3", s)
	}
	return k, nil
}

func workflowList(c *cli.Context) error {
	dir, err := searchDir(c, c.Args().First())
	if err != nil {
		return err
	}
	ks, err := workflow.Versions{Dir: dir}.List()
	if err != nil {
		return err
	}
	rows, _ := search.ReadHistory(filepath.Join(dir, search.ComparisonHistoryFile))
	arb, _ := search.ReadHistory(filepath.Join(dir, search.ChampionHistoryFile))
	rows = append(rows, arb...)
	if c.Bool("json") {
		return printJSON(c, map[string]any{"dir": dir, "versions": ks, "comparisons": rows})
	}
	tw := newTable(c.App.Writer)
	defer tw.Flush()
	fmt.Fprintf(tw, "VERSION\tVS REFERENCE\tVS CHAMPION\n")
	for _, k := range ks {
		ref, champ := "-", "-"
		for _, r := range rows {
			if r.Candidate != fmt.Sprintf("v%d", k) {
				continue
			}
			if r.Against == "reference" {
				ref = r.Outcome
			} else {
				champ = r.Outcome + " vs " + r.Opponent
			}
		}
		fmt.Fprintf(tw, "v%d\t%s\t%s\n", k, ref, champ)
	}
	return nil
}

func workflowShow(c *cli.Context) error {
	dir, err := searchDir(c, c.Args().First())
	if err != nil {
		return err
	}
	k := -1
	if c.Args().Len() > 1 {
		if k, err = parseVersion(c.Args().Get(1)); err != nil {
			return err
		}
	} else {
		var ret search.Retained
		b, err := os.ReadFile(filepath.Join(dir, search.RetainedFile))
		if err != nil || json.Unmarshal(b, &ret) != nil {
			return fmt.Errorf("search in %s has no retained workflow yet", dir)
		}
		k = ret.Champion
		if ret.Version != nil {
			k = *ret.Version
		}
	}
	b, err := os.ReadFile(workflow.Versions{Dir: dir}.Path(k))
	if err != nil {
		return fmt.Errorf("design v%d: %w", k, err)
	}
	_, err = c.App.Writer.Write(b)
	return err
}

func workflowDiff(c *cli.Context) error {
	if c.Args().Len() != 3 {
		return fmt.Errorf("usage: massctl workflow diff TASK vA vB")
	}
	dir, err := searchDir(c, c.Args().First())
	if err != nil {
		return err
	}
	var texts [2]string
	for i, a := range []string{c.Args().Get(1), c.Args().Get(2)} {
		k, err := parseVersion(a)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(workflow.Versions{Dir: dir}.Path(k))
		if err != nil {
			return fmt.Errorf("design %s: %w", a, err)
		}
		texts[i] = string(b)
	}
	fmt.Fprint(c.App.Writer, search.Unified(c.Args().Get(1), c.Args().Get(2), texts[0], texts[1]))
	return nil
}

func workflowChampion(c *cli.Context) error {
	dir, err := searchDir(c, c.Args().First())
	if err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, search.RetainedFile))
	if err != nil {
		return fmt.Errorf("retained workflow: %w", err)
	}
	_, err = c.App.Writer.Write(b)
	return err
}

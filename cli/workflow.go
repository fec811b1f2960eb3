package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/searchfmt"
)

// workflowCommand is `massctl workflow`: read the designs of a task's
// searches, through massd's API (GET /v1/searches/{task}/{id} and its files).
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

// searchRef is one search as the API names it, and the directory massd
// keeps it in (shown, never read here).
type searchRef struct {
	cl       *client.Client
	task, id string
	sr       api.Search
}

// findSearch fetches the chosen (or latest) search of task.
func findSearch(c *cli.Context, task string) (searchRef, error) {
	cl := clientFrom(c)
	id := c.String("search")
	if id != "" {
		j, err := cl.Job(c.Context, id)
		if err != nil {
			return searchRef{}, err
		}
		task = j.TaskID
	} else {
		js, err := cl.Jobs(c.Context, client.JobFilter{Kind: search.KindName, TaskID: task, Limit: 1})
		if err != nil {
			return searchRef{}, err
		}
		if len(js) == 0 {
			return searchRef{}, fmt.Errorf("task %s has no search; run massctl search --task %s", task, task)
		}
		id = js[0].ID
	}
	sr, err := cl.Search(c.Context, task, id)
	if err != nil {
		return searchRef{}, err
	}
	return searchRef{cl: cl, task: task, id: id, sr: sr}, nil
}

// file reads one file of the search directory through the API.
func (r searchRef) file(c *cli.Context, name string) ([]byte, error) {
	rc, err := r.cl.SearchFile(c.Context, r.task, r.id, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// design reads design version k.
func (r searchRef) design(c *cli.Context, k int) ([]byte, error) {
	return r.file(c, path.Join(searchfmt.VersionsDir, searchfmt.VersionFile(k)))
}

// comparisons decodes the search's verdict rows (history, then champion
// arbitrations); a row that does not decode is skipped, as in the file.
func (r searchRef) comparisons() []search.Comparison {
	var rows []search.Comparison
	for _, raw := range append(append([]json.RawMessage{}, r.sr.Comparisons...), r.sr.Champions...) {
		var c search.Comparison
		if json.Unmarshal(raw, &c) == nil {
			rows = append(rows, c)
		}
	}
	return rows
}

func parseVersion(s string) (int, error) {
	k, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || k < 0 {
		return 0, fmt.Errorf("version %q: want vK, e.g. v3", s)
	}
	return k, nil
}

func workflowList(c *cli.Context) error {
	r, err := findSearch(c, c.Args().First())
	if err != nil {
		return err
	}
	ks, rows := r.sr.Versions, r.comparisons()
	if c.Bool("json") {
		return printJSON(c, map[string]any{"dir": r.sr.Dir, "versions": ks, "comparisons": rows})
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
	r, err := findSearch(c, c.Args().First())
	if err != nil {
		return err
	}
	k := -1
	if c.Args().Len() > 1 {
		if k, err = parseVersion(c.Args().Get(1)); err != nil {
			return err
		}
	} else {
		var ret searchfmt.Retained
		if len(r.sr.Retained) == 0 || json.Unmarshal(r.sr.Retained, &ret) != nil {
			return fmt.Errorf("search in %s has no retained workflow yet", r.sr.Dir)
		}
		k = ret.Champion
		if ret.Version != nil {
			k = *ret.Version
		}
	}
	b, err := r.design(c, k)
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
	r, err := findSearch(c, c.Args().First())
	if err != nil {
		return err
	}
	var texts [2]string
	for i, a := range []string{c.Args().Get(1), c.Args().Get(2)} {
		k, err := parseVersion(a)
		if err != nil {
			return err
		}
		b, err := r.design(c, k)
		if err != nil {
			return fmt.Errorf("design %s: %w", a, err)
		}
		texts[i] = string(b)
	}
	fmt.Fprint(c.App.Writer, search.Unified(c.Args().Get(1), c.Args().Get(2), texts[0], texts[1]))
	return nil
}

func workflowChampion(c *cli.Context) error {
	r, err := findSearch(c, c.Args().First())
	if err != nil {
		return err
	}
	b, err := r.file(c, searchfmt.RetainedFile)
	if err != nil {
		return fmt.Errorf("retained workflow: %w", err)
	}
	_, err = c.App.Writer.Write(b)
	return err
}

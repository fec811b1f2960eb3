package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
	"github.com/mass-dev/mass/cycle/report"
	"github.com/mass-dev/mass/internal/atomicfile"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "the evaluation report of generations: win rates, Bradley–Terry scores, loss curves, audit, tokens, blind spots",
		ArgsUsage: "GEN…  (generation numbers or model names; none: every model of the evaluation)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "eval", Usage: "evaluation `NAME` (default: the newest rollout)"},
			&cli.StringFlag{Name: "html", Usage: "write the self-contained HTML page to `FILE`"},
			jsonFlag(),
		},
		Action: reportAction,
	}
}

func reportAction(c *cli.Context) error {
	r, err := clientFrom(c).Report(c.Context, c.String("eval"), c.Args().Slice())
	if err != nil {
		return err
	}
	if p := c.String("html"); p != "" {
		var buf bytes.Buffer
		if err := report.Render(&buf, r, report.RenderOptions{}); err != nil {
			return err
		}
		if err := atomicfile.Write(p, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if !c.Bool("json") {
			abs, _ := filepath.Abs(p)
			fmt.Fprintf(c.App.Writer, "wrote %s\n", abs)
		}
	}
	if c.Bool("json") {
		return printJSON(c, r)
	}
	if c.String("html") == "" {
		return printReport(c.App.Writer, r)
	}
	return nil
}

func printReport(w io.Writer, r *report.Report) error {
	fmt.Fprintf(w, "evaluation %s: baseline %s, %d tasks × %d episodes, %d verdicts\n", r.Eval, r.Baseline, len(r.Tasks), r.Episodes, r.Verdicts)
	if len(r.DryRun) > 0 {
		fmt.Fprintf(w, "DRY RUN: %s played massd's scripted dry-run policy, not a real model; these numbers test the pipeline, not a model\n", strings.Join(r.DryRun, ", "))
	}
	fmt.Fprintf(w, "%s\n", r.Unit)
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tTASK\tWINS\tLOSSES\tTIES\tPAIRS\tWIN RATE\tINTERVAL\tMETHOD")
	row := func(model, task string, w judgepairs.WinRate) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s–%s\t%s\n", model, task, w.Wins, w.Losses, w.Ties, w.Pairs,
			pctOf(w.Rate), pctOf(w.Low), pctOf(w.High), dash(w.Method))
	}
	for _, m := range r.WinRates {
		row(m.Model, "overall", m.Overall)
		for _, t := range m.Tasks {
			row(m.Model, t.Task, t.WinRate)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := printStatistics(w, r.Statistics); err != nil {
		return err
	}
	for _, a := range r.Audit {
		fmt.Fprintf(w, "audit %s: delegation %d/%d, code handoff %d/%d, worker revision %d/%d, orchestrator revision %d/%d, grader pass %d/%d\n",
			a.Model, a.Delegation, a.N, a.CodeHandoff, a.N, a.WorkerRevision, a.N, a.OrchestratorRevision, a.N, a.Passed, a.Graded)
	}
	for _, a := range r.Agreement {
		fmt.Fprintf(w, "agreement of %s with the external majority: %d/%d\n", a.Judge, a.Agree, a.Pairs)
	}
	_, err := fmt.Fprintf(w, "%d blind spots (massctl report --html FILE shows them)\n", len(r.BlindSpots))
	return err
}

// printStatistics is the report's significance table: each test with its
// unit, statistic and p-value.
func printStatistics(w io.Writer, stats []report.Stat) error {
	if len(stats) == 0 {
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "MODEL\tTEST\tUNIT\tSTATISTIC\tP\tDETAIL")
	for _, s := range stats {
		stat, p := "–", "–"
		if s.Statistic != nil {
			stat = fmt.Sprintf("%.3f", *s.Statistic)
		}
		if s.P != nil {
			p = fmt.Sprintf("%.3g", *s.P)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Model, s.Test, s.Unit, stat, p, s.Detail)
	}
	return tw.Flush()
}

func pctOf(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**p)
}

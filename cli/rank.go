package cli

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cycle/rank"
)

// rankCommand fits Bradley–Terry offline on a matches file and prints ring
// schedules; it needs no daemon.
func rankCommand() *cli.Command {
	return &cli.Command{
		Name:  "rank",
		Usage: "rank episodes by Bradley–Terry over pairwise judgments in a matches file (offline)",
		UsageText: "massctl rank --matches FILE [--iterations 500] [--prior 0.5] [--json]\n" +
			"massctl rank schedule --episodes N [--opponents 6] [--seed S] [--json]",
		Description: "Reads JSONL rows {\"a\": ID, \"b\": ID, \"winner\": …} (other fields such as rationale, model, seed\n" +
			"and metrics are ignored), as in the reference's task{q}_matches.jsonl. winner is a's id or \"A\" (a won),\n" +
			"b's id or \"B\" (b won), or \"tie\" (half a win each); anything else, e.g. \"error\", is an invalid judgment:\n" +
			"excluded from the fit and counted in \"excluded\" (the reference would count it as a tie).\n" +
			"The fit is the paper's MM algorithm: strengths start at 1; each of --iterations rounds sets\n" +
			"p_i = (wins_i + ties_i/2 + prior) / (prior/(p_i+1) + sum_j n_ij/(p_i+p_j)) for all i at once, then\n" +
			"rescales to mean 1; score = ln p. Rank 1 is the best; equal scores are ordered by id.\n" +
			"--json prints {\"episodes\":[{\"id\",\"score\",\"strength\",\"rank\",\"wins\",\"losses\",\"ties\"}],\"excluded\":N}.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "matches", Usage: "JSONL `FILE` of judgments (- reads stdin)"},
			&cli.IntFlag{Name: "iterations", Value: rank.DefaultIterations, Usage: "MM rounds"},
			&cli.Float64Flag{Name: "prior", Value: rank.DefaultPrior, Usage: "virtual wins per episode, and virtual games against a strength-1 player"},
			&cli.BoolFlag{Name: "json", Usage: "print the ranking as JSON"},
		},
		Action: rankRun,
		Subcommands: []*cli.Command{{
			Name:      "schedule",
			Usage:     "print the ring schedule of a tournament over episodes \"0\"…\"N-1\"",
			UsageText: "massctl rank schedule --episodes N [--opponents 6] [--seed S] [--json]",
			Description: "The names are sorted, shuffled by --seed, and each position i meets i+d (mod N) for\n" +
				"d = 1..K/2: every episode meets K neighbours once (all others when N ≤ K+1), each pair once,\n" +
				"sides flipped by a second generator from the same seed. --json prints {\"pairs\":[{\"a\",\"b\"}]}.",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "episodes", Usage: "number of episodes `N`", Required: true},
				&cli.IntFlag{Name: "opponents", Value: rank.DefaultOpponents, Usage: "neighbours `K` each episode meets (even)"},
				&cli.Uint64Flag{Name: "seed", Usage: "shuffle and side `SEED`"},
				&cli.BoolFlag{Name: "json", Usage: "print the pairs as JSON"},
			},
			Action: rankSchedule,
		}},
	}
}

// rankOutput is what massctl rank --json prints.
type rankOutput struct {
	Episodes []rank.Score `json:"episodes"`
	Excluded int          `json:"excluded"`
}

func rankRun(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return cli.Exit(fmt.Sprintf("massctl rank takes no arguments (got %q); did you mean --matches %s or rank schedule?", c.Args().First(), c.Args().First()), 2)
	}
	path := c.String("matches")
	if path == "" {
		return cli.Exit("massctl rank needs --matches FILE (JSONL rows {\"a\",\"b\",\"winner\"}); see massctl rank --help", 2)
	}
	if c.Int("iterations") <= 0 {
		return cli.Exit(fmt.Sprintf("--iterations %d must be positive", c.Int("iterations")), 2)
	}
	if p := c.Float64("prior"); !(p > 0) {
		return cli.Exit(fmt.Sprintf("--prior %v must be positive (it keeps undefeated and winless episodes finite)", p), 2)
	}
	in := c.App.Reader
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("open matches: %w", err)
		}
		defer f.Close()
		in = f
	}
	ms, excluded, err := rank.ReadMatches(in)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	scores, err := rank.Fit(nil, ms, rank.Options{Iterations: c.Int("iterations"), Prior: c.Float64("prior")})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if scores == nil {
		scores = []rank.Score{}
	}
	out := rankOutput{Episodes: scores, Excluded: excluded}
	if c.Bool("json") {
		return printJSON(c, out)
	}
	tw := newTable(c.App.Writer)
	fmt.Fprintln(tw, "RANK\tEPISODE\tSCORE\tSTRENGTH\tW\tL\tT")
	for _, s := range scores {
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%.4f\t%d\t%d\t%d\n", s.Rank, s.ID, s.Score, s.Strength, s.Wins, s.Losses, s.Ties)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "%d valid judgments, %d invalid excluded\n", len(ms), excluded)
	return nil
}

func rankSchedule(c *cli.Context) error {
	n := c.Int("episodes")
	if n < 0 {
		return cli.Exit(fmt.Sprintf("--episodes %d must not be negative", n), 2)
	}
	pairs, err := rank.Ring(rank.Names(n), c.Int("opponents"), c.Uint64("seed"))
	if err != nil {
		return cli.Exit("--opponents: "+err.Error(), 2)
	}
	if pairs == nil {
		pairs = []rank.Pair{}
	}
	if c.Bool("json") {
		return printJSON(c, struct {
			Pairs []rank.Pair `json:"pairs"`
		}{pairs})
	}
	for _, p := range pairs {
		fmt.Fprintf(c.App.Writer, "%s\t%s\n", p.A, p.B)
	}
	return nil
}

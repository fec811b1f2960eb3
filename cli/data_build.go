package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

func dataBuildCommand(tokFlag cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "turn recorded episodes into SFT windows (rows.jsonl, windows.bin, manifest.json)",
		ArgsUsage: "[EPISODE-DIR...]",
		Flags: []cli.Flag{
			tokFlag,
			&cli.StringSliceFlag{Name: "episodes", Usage: "episode `DIR`, or a directory of episode dirs (repeatable)"},
			&cli.StringFlag{Name: "out", Usage: "dataset `DIR` to write", Required: true},
			&cli.IntFlag{Name: "max-tokens", Value: sft.DefaultMaxTokens, Usage: "window size in tokens"},
			&cli.IntFlag{Name: "context-tokens", Value: sft.DefaultContextTokens, Usage: "masked earlier context per window"},
			&cli.IntFlag{Name: "workers", Usage: "episodes built in parallel", DefaultText: "all cores"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress lines"},
			&cli.StringFlag{Name: "selection", Usage: "a generation's selection `FILE` {\"train\":[ids],\"val\":[ids]}: train ids build --out, val ids --out/val"},
			&cli.BoolFlag{Name: "dry-run", Usage: "label the dataset dry-run: it takes only dry-run (scripted) episodes"},
			&cli.BoolFlag{Name: "include-ineligible", Usage: "also build episodes the eligibility check excludes (failed grader, violations, shadow copies, missing outputs)"},
			&cli.BoolFlag{Name: "force", Usage: "replace an existing dataset in --out"},
			&cli.BoolFlag{Name: "strict", Usage: "fail, naming the episode, when an episode yields no window with supervised tokens or is excluded (a generation's render is strict)"},
			&cli.StringFlag{Name: "format", Value: sft.FormatNative, Usage: "rows.jsonl `FORMAT`: native, or reference (the rows the reference's load_windows reads: integer task, condition, weight)"},
		},
		Action: dataBuild,
	}
}

func dataBuild(c *cli.Context) error {
	paths := append(c.StringSlice("episodes"), c.Args().Slice()...)
	if len(paths) == 0 {
		return fmt.Errorf("data build needs episodes: --episodes DIR (an episode or a directory of episodes)")
	}
	dirs, err := sft.FindEpisodes(paths)
	if err != nil {
		return err
	}
	tdir := c.String("tokenizer")
	tok, err := tokenizer.Load(tdir)
	if err != nil {
		return err
	}
	tmpl, err := chat.LoadTemplate(tdir)
	if err != nil {
		return err
	}
	errw := c.App.ErrWriter
	if errw == nil {
		errw = os.Stderr
	}
	start := time.Now()
	cfg := sft.BuildConfig{
		Tokenizer: tok, Template: tmpl, TokenizerDir: tdir, Workers: c.Int("workers"),
		Window: sft.WindowConfig{MaxTokens: c.Int("max-tokens"), ContextTokens: c.Int("context-tokens")},
	}
	if !c.Bool("quiet") {
		cfg.Progress = func(p sft.BuildProgress) {
			fmt.Fprintf(errw, "[%d/%d] %s: %d windows; dataset %d windows, %d tokens, %d supervised (%.1fs)\n", p.Done, p.Total,
				filepath.Base(p.Episode), p.Windows, p.Dataset.Windows, p.Dataset.Tokens, p.Dataset.SupervisedTokens, time.Since(start).Seconds())
		}
	}
	cfg.Dataset.DryRun, cfg.IncludeIneligible, cfg.Force = c.Bool("dry-run"), c.Bool("include-ineligible"), c.Bool("force")
	cfg.Strict = c.Bool("strict")
	cfg.Format = c.String("format")
	cfg.Excluded = func(x sft.Exclusion, included bool) {
		if included {
			fmt.Fprintf(errw, "included on request (--include-ineligible): %s: %s\n", x.Episode, x.Reason)
			return
		}
		fmt.Fprintf(errw, "excluded %s: %s\n", x.Episode, x.Reason)
	}
	train, val, err := selectEpisodes(c.String("selection"), dirs)
	if err != nil {
		return err
	}
	m, err := sft.Build(c.Context, cfg, train, c.String("out"))
	if err != nil {
		return err
	}
	if len(val) > 0 {
		vm, err := sft.Build(c.Context, cfg, val, filepath.Join(c.String("out"), "val"))
		if err != nil {
			return fmt.Errorf("validation split: %w", err)
		}
		fmt.Fprintf(c.App.Writer, "validation split: %d episodes, %d windows in %s\n", vm.Episodes, vm.Total.Windows, filepath.Join(c.String("out"), "val"))
	}
	elapsed := time.Since(start)
	printDataSummary(c.App.Writer, m)
	fmt.Fprintf(c.App.Writer, "\nbuilt %s in %.1fs: %.0f supervised tokens/s, %.0f window tokens/s, peak RSS %s\n",
		c.String("out"), elapsed.Seconds(), float64(m.Total.SupervisedTokens)/elapsed.Seconds(),
		float64(m.Total.Tokens)/elapsed.Seconds(), dataPeakRSS())
	return nil
}

// selectEpisodes applies a selection file, when given, to the episode dirs.
func selectEpisodes(file string, dirs []string) (train, val []string, err error) {
	if file == "" {
		return dirs, nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("selection: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, sft.MaxSelectionBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("selection %s: %w", file, err)
	}
	sel, err := sft.ParseSelection(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	return sel.Split(dirs)
}

func printDataSummary(w io.Writer, m *sft.Manifest) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\trole\twindows\ttokens\tsupervised\t")
	tasks := make([]string, 0, len(m.ByTask))
	for t := range m.ByTask {
		tasks = append(tasks, t)
	}
	sort.Strings(tasks)
	row := func(task, role string, c *sft.Counts) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t\n", task, role, c.Windows, c.Tokens, c.SupervisedTokens)
	}
	for _, t := range tasks {
		tc := m.ByTask[t]
		for _, r := range dataRoles(tc.ByRole) {
			row(t, r, tc.ByRole[r])
		}
		row(t, "all", &tc.Counts)
	}
	for _, r := range dataRoles(m.ByRole) {
		row("TOTAL", r, m.ByRole[r])
	}
	row("TOTAL", "all", &m.Total)
	tw.Flush()
	fmt.Fprintf(w, "\n%d episodes, %d threads, %d segments; calls %d (errors %d, retries %d, cut by length %d); "+
		"teacher prompts replaced %d, missing %d\n", m.Episodes, m.Threads, m.Segments, m.Stats.Calls, m.Stats.ErrorCalls,
		m.Stats.Retries, m.Stats.LengthCut, m.Stats.TeacherReplaced, m.Stats.TeacherMissing)
	if len(m.Excluded) > 0 {
		fmt.Fprintf(w, "episodes excluded by the eligibility check: %d (reasons above; --include-ineligible builds them)\n", len(m.Excluded))
	}
	if len(m.IncludedIneligible) > 0 {
		fmt.Fprintf(w, "ineligible episodes included on request: %d\n", len(m.IncludedIneligible))
	}
	if len(m.Dropped) > 0 {
		var parts []string
		for k, v := range m.Dropped {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(parts)
		fmt.Fprintf(w, "segments dropped: %s\n", strings.Join(parts, ", "))
	}
}

func dataRoles(m map[string]*sft.Counts) []string {
	roles := make([]string, 0, len(m))
	for r := range m {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

// dataPeakRSS reads the process's peak resident set size (Linux VmHWM).
func dataPeakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
			}
		}
	}
	return "unknown"
}

func dataSynthCommand() *cli.Command {
	return &cli.Command{
		Name:  "synth",
		Usage: "write synthetic episodes (api_requests.jsonl + episode.json) for tests, demos and benchmarks",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "`DIR` to hold the episode dirs", Required: true},
			&cli.IntFlag{Name: "episodes", Value: 4, Usage: "how many episodes to write"},
			&cli.IntFlag{Name: "tasks", Value: 2, Usage: "distinct task ids the episodes cycle through"},
			&cli.IntFlag{Name: "workers", Value: 3, Usage: "worker threads per episode"},
			&cli.IntFlag{Name: "turns", Value: 6, Usage: "model calls per thread"},
			&cli.IntFlag{Name: "response-words", Value: 200, Usage: "words per model response"},
			&cli.IntFlag{Name: "tool-words", Value: 150, Usage: "words per tool result"},
		},
		Action: func(c *cli.Context) error {
			if c.Int("tasks") <= 0 || c.Int("episodes") <= 0 {
				return fmt.Errorf("--episodes and --tasks must be positive")
			}
			for i := 0; i < c.Int("episodes"); i++ {
				id := fmt.Sprintf("ep-synth-%04d", i)
				spec := sft.SynthSpec{EpisodeID: id, TaskID: fmt.Sprintf("task-%02d", i%c.Int("tasks")),
					Workers: c.Int("workers"), Turns: c.Int("turns"), ResponseWords: c.Int("response-words"),
					ToolWords: c.Int("tool-words"), Seed: uint64(i + 1)}
				if err := sft.WriteSyntheticEpisode(filepath.Join(c.String("out"), id), spec); err != nil {
					return err
				}
			}
			fmt.Fprintf(c.App.Writer, "wrote %d episodes under %s\n", c.Int("episodes"), c.String("out"))
			return nil
		},
	}
}

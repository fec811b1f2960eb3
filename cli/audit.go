package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/datadir"
)

// auditCommand computes an episode's behavioural audit and verifies its
// ledger, from a local data directory or through massd.
func auditCommand() *cli.Command {
	dataDir := &cli.StringFlag{Name: "data-dir", Usage: "read the episode from `DIR`/episodes/EPISODE instead of asking massd"}
	return &cli.Command{
		Name:      "audit",
		Usage:     "compute an episode's behavioural audit from its ledger",
		ArgsUsage: "EPISODE",
		Description: "Counts delegation, code handoff, worker and orchestrator revision by the paper's definitions,\n" +
			"plus files changed by shell commands, protected-path violations, loop halts and a per-agent\n" +
			"table — all from the hash-chained ledger and recorded model calls (definitions: go doc\n" +
			"github.com/mass-dev/mass/agents/audit). Exits 1 when the ledger's chain does not verify;\n" +
			"the audit then covers only the records before the first bad line.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the audit as JSON"},
			&cli.StringFlag{Name: "html", Usage: "also write a self-contained HTML report to `FILE`"},
			dataDir,
		},
		Action: auditRun,
		Subcommands: []*cli.Command{{
			Name:      "verify",
			Usage:     "check an episode ledger's hash chain; exit 1 naming the first bad record",
			ArgsUsage: "EPISODE",
			Flags:     []cli.Flag{dataDir},
			Action:    auditVerify,
		}},
	}
}

// episodeArg returns the single EPISODE argument, accepting flags given
// after it (urfave/cli stops parsing flags at the first argument). ok is
// false, with a nil error, when --help was among them and help was shown.
func episodeArg(c *cli.Context) (episode string, ok bool, err error) {
	args, err := interleavedFlags(c)
	if err != nil {
		return "", false, err
	}
	if c.Bool("help") {
		return "", false, cli.ShowSubcommandHelp(c)
	}
	if len(args) != 1 || args[0] == "" {
		return "", false, cli.Exit(fmt.Sprintf("usage: massctl %s EPISODE (got %d arguments)", c.Command.FullName(), len(args)), 2)
	}
	return args[0], true, nil
}

// interleavedFlags is positional with a usage error's exit code (2).
func interleavedFlags(c *cli.Context) ([]string, error) {
	args, err := positional(c)
	if err != nil {
		return nil, cli.Exit(err.Error(), 2)
	}
	return args, nil
}

// episodeSource returns where the episode's files come from.
func episodeSource(c *cli.Context, episode string) (audit.Source, error) {
	if d := c.String("data-dir"); d != "" {
		dir := datadir.New(d).Episode(episode)
		if strings.ContainsAny(episode, `/\`) || episode == "." || episode == ".." {
			return nil, cli.Exit(fmt.Sprintf("invalid episode id %q", episode), 2)
		}
		if _, err := os.Stat(dir); err != nil {
			return nil, cli.Exit(fmt.Sprintf("episode %s: %v (is --data-dir massd's data directory?)", episode, err), 1)
		}
		return audit.DirSource{Dir: dir}, nil
	}
	return clientSource{c: clientFrom(c), episode: episode}, nil
}

func auditRun(c *cli.Context) error {
	episode, ok, err := episodeArg(c)
	if err != nil || !ok {
		return err
	}
	src, err := episodeSource(c, episode)
	if err != nil {
		return err
	}
	in, err := audit.Load(c.Context, src, episode)
	if err != nil {
		return cli.Exit(fmt.Sprintf("audit %s: %v", episode, err), 1)
	}
	rep := audit.Compute(in)
	if f := c.String("html"); f != "" {
		var buf bytes.Buffer
		if err := audit.WriteHTML(&buf, rep); err != nil {
			return cli.Exit(err.Error(), 1)
		}
		if err := os.WriteFile(f, buf.Bytes(), 0o644); err != nil {
			return cli.Exit(fmt.Sprintf("write html report: %v", err), 1)
		}
	}
	out := c.App.Writer
	if c.Bool("json") {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printAudit(out, rep)
	}
	if f := c.String("html"); f != "" && !c.Bool("json") {
		fmt.Fprintf(out, "\nHTML report: %s\n", f)
	}
	if !rep.Ledger.Verified {
		return cli.Exit(fmt.Sprintf("ledger of %s does not verify: %s; the audit covers only the first %d records",
			episode, rep.Ledger.Error, rep.Ledger.Records), 1)
	}
	return nil
}

func printAudit(w io.Writer, r *audit.Report) {
	status := fmt.Sprintf("chain verified, %d records", r.Ledger.Records)
	if !r.Ledger.Verified {
		status = fmt.Sprintf("CHAIN NOT VERIFIED (%s), audit of the first %d records", r.Ledger.Error, r.Ledger.Records)
	}
	fmt.Fprintf(w, "episode %s — ledger %s\n", r.Episode, status)
	if r.DryRun {
		fmt.Fprintf(w, "DRY RUN: model %s is massd's scripted dry-run policy, not a real model\n", r.Model)
	}
	printSandbox(w, r.Sandbox)
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, kv := range []struct {
		k string
		v int
	}{
		{"delegation", r.Delegation}, {"code handoff", r.CodeHandoff}, {"worker revision", r.WorkerRevision},
		{"orchestrator revision", r.OrchestratorRevision}, {"shell-changed files", r.ShellChangedFiles},
		{"protected-path violations", r.ProtectedPathViolations}, {"protected-path attempts", r.ProtectedPathAttempts},
		{"shadow copies", r.ShadowCopies}, {"hidden-path attempts", r.HiddenPathAttempts}, {"loop halts", r.LoopHalts},
	} {
		fmt.Fprintf(tw, "%s\t%d\n", kv.k, kv.v)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tROLE\tPARENT\tTURNS\tPROMPT TOK\tCOMPL TOK\tTOOL CALLS\tFAILED\tSHELL-CHANGED\tWALL\tSTOP\t")
	for _, a := range r.Agents {
		stop := a.Stop
		if !a.Finished {
			stop = "not finished"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.1fs\t%s\t\n", a.Agent, a.Role, a.Parent, a.Turns,
			a.PromptTokens, a.CompletionTokens, a.ToolCalls, a.FailedToolCalls, a.ShellChanged, a.WallMS/1000, stop)
	}
	tw.Flush()
	if len(r.Handoffs)+len(r.ShellChanges)+len(r.Violations)+len(r.Halts) > 0 {
		fmt.Fprintln(w)
	}
	for _, h := range r.Handoffs {
		fmt.Fprintf(w, "handoff: %s %s -> %s (write seq %d, finish seq %d, read seq %d)\n",
			h.Path, h.Writer, h.Reader, h.WriteSeq, h.FinishSeq, h.ReadSeq)
	}
	for _, s := range r.ShellChanges {
		who := s.Agent
		if who == "" {
			who = "unattributed"
		}
		fmt.Fprintf(w, "shell change: %s %s by %s\n", s.Path, s.Change, who)
	}
	for _, v := range r.Violations {
		fmt.Fprintf(w, "protected-path violation: seq %d %s %s: %s\n", v.Seq, v.Agent, v.Path, v.Error)
	}
	for _, h := range r.Halts {
		fmt.Fprintf(w, "loop halt: seq %d %s rule %s\n", h.Seq, h.Agent, h.Rule)
	}
	if r.Guards != nil {
		printGuards(w, r.Guards)
	}
}

func auditVerify(c *cli.Context) error {
	episode, ok, err := episodeArg(c)
	if err != nil || !ok {
		return err
	}
	src, err := episodeSource(c, episode)
	if err != nil {
		return err
	}
	st, err := audit.VerifyLedger(c.Context, src, episode)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if !st.Verified {
		return cli.Exit(fmt.Sprintf("ledger of %s is NOT intact: %s (%d records before it verify)", episode, st.Error, st.Records), 1)
	}
	if st.Empty {
		fmt.Fprintf(c.App.Writer, "ledger of %s verified: empty (massd stopped the episode before it created its ledger; run_status.json says so)\n", episode)
		return nil
	}
	tail := "no end head recorded in run_status.json, a cut-off tail cannot be ruled out"
	if st.HeadChecked {
		tail = "head matches run_status.json"
	}
	fmt.Fprintf(c.App.Writer, "ledger of %s verified: %d records, hash chain intact, %s\n", episode, st.Records, tail)
	return nil
}

// clientSource reads an episode's files from massd.
type clientSource struct {
	c       *client.Client
	episode string
}

var _ audit.Source = clientSource{}

func (s clientSource) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	rc, err := s.c.EpisodeFile(ctx, s.episode, name)
	if errors.Is(err, api.ErrNotFound) {
		return nil, fmt.Errorf("episode %s file %s: %w", s.episode, name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("episode %s file %s: %s", s.episode, name, Explain(err))
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("episode %s file %s: %w", s.episode, name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("episode %s file %s: larger than %d bytes", s.episode, name, max)
	}
	return b, nil
}

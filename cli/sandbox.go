package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/docker/docker/client"
	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/probe"
)

// sandboxCommand shows the sandbox policy and runs the isolation self-test
// against the local Docker engine; no daemon is involved.
func sandboxCommand() *cli.Command {
	binFlags := []cli.Flag{
		&cli.StringFlag{Name: "runtime", Value: sandbox.RuntimeAuto, Usage: "OCI runtime `NAME`: auto (what massd uses: runsc where registered and ordinary commands work in it, else runc; $" + sandbox.RuntimeEnv + " pins it), runc, or runsc for gVisor"},
		&cli.StringFlag{Name: "helper", Usage: "`PATH` of mass-sandbox-helper (default: next to massctl, then $PATH)"},
		&cli.StringFlag{Name: "backend", Value: "docker", Usage: "where boxes run: docker (this host's engine) or kubernetes (the cluster --kubeconfig names)"},
		&cli.StringFlag{Name: "kubeconfig", Usage: "kubeconfig `PATH` of the kubernetes backend (default: $MASS_K8S_KUBECONFIG)"},
		&cli.StringFlag{Name: "namespace", Usage: "kubernetes `NAMESPACE` of the boxes (default: mass-sandbox)"},
	}
	return &cli.Command{
		Name:  "sandbox",
		Usage: "inspect and verify the agent sandbox on the local Docker engine",
		Subcommands: []*cli.Command{
			{
				Name:   "policy",
				Usage:  "print the effective policy, field by field, with engine facts and warnings",
				Flags:  append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}, wideFlag()}, binFlags...),
				Action: sandboxPolicy,
			},
			{
				Name:  "verify",
				Usage: "run the isolation probes; exit 0 only if every probe passes",
				Description: "Runs mass-probe inside containers created with the production policy, plus host-side probes.\n" +
					"--weaken applies deliberate holes (comma-separated) to show that the probes fail: " + weakNames() + ".",
				Flags: append([]cli.Flag{
					&cli.BoolFlag{Name: "json", Usage: `print {"probes":[{"name","ok","expected","observed"}],"passed":N,"failed":M}`},
					wideFlag(),
					&cli.StringFlag{Name: "weaken", Usage: "comma-separated `LIST` of policy holes to apply"},
					&cli.StringFlag{Name: "groups", Value: strings.Join(probe.AllGroups, ","), Usage: "probe groups to run (`LIST` of static,resources,host,egress; egress starts a local stand-in internet)"},
					&cli.IntFlag{Name: "race-ops", Value: probe.DefaultRaceOps, Usage: "host file operations during the swap race"},
					&cli.StringFlag{Name: "image", Usage: "image `REF`", DefaultText: "mass-agent:latest, else mass-test:latest"},
					&cli.StringFlag{Name: "probe", Usage: "`PATH` of the static mass-probe binary (default: next to massctl, then $PATH)"},
				}, binFlags...),
				Action: sandboxVerify,
			},
		},
	}
}

func weakNames() string {
	var n []string
	for _, w := range probe.Weakenings {
		n = append(n, w.Name)
	}
	for _, w := range probe.EgressWeakenings {
		n = append(n, w.Name+" (with --groups egress)")
	}
	return strings.Join(n, ", ")
}

// findBinary resolves a project binary: the flag, then beside massctl, then $PATH, then ./bin.
func findBinary(flagValue, name string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("bin", name)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return filepath.Abs(p)
	}
	return "", fmt.Errorf("%s not found beside massctl, in $PATH or ./bin; build it with `CGO_ENABLED=0 go build -o bin/ ./sandbox/...`", name)
}

// openRuntime connects to the engine with the given default policy.
func openRuntime(c *cli.Context, pol sandbox.Policy, img string, weak ...probe.Options) (*docker.Runtime, *client.Client, error) {
	helper, err := findBinary(c.String("helper"), "mass-sandbox-helper")
	if err != nil {
		return nil, nil, err
	}
	eng, err := dockerEngine()
	if err != nil {
		return nil, nil, err
	}
	var w probe.Options
	if len(weak) > 0 {
		w = weak[0]
	}
	rt, err := docker.New(ctxOf(c), docker.Config{
		ReadableHelper: w.ReadableHelper, EngineMasks: w.EngineMasks,
		DaemonID: fmt.Sprintf("massctl-%d", os.Getpid()), HelperPath: helper, Image: img, Policy: pol,
		Client: eng, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err != nil {
		eng.Close()
		return nil, nil, err
	}
	return rt, eng, nil
}

// dockerEngine connects to the Docker engine named by DOCKER_HOST (or the
// default socket), with a deadline on every call (docker.NewClient).
func dockerEngine() (*client.Client, error) {
	eng, err := docker.NewClient("", 0)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	return eng, nil
}

// ctxOf is the command's context, or Background when run without one.
func ctxOf(c *cli.Context) context.Context {
	if c.Context != nil {
		return c.Context
	}
	return context.Background()
}

func sandboxPolicy(c *cli.Context) error {
	if c.String("backend") == "kubernetes" {
		return sandboxPolicyK8s(c)
	}
	pol := sandbox.DefaultPolicy()
	pol.Runtime = c.String("runtime")
	rt, eng, err := openRuntime(c, pol, "")
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer eng.Close()
	defer rt.Close()
	rep, err := rt.Report(ctxOf(c))
	if err != nil {
		return cli.Exit(fmt.Sprintf("sandbox report: %v", err), 1)
	}
	// rep.Policy is pol with auto resolved, as massd would resolve it.
	return printPolicy(c, rep, pol)
}

// printPolicy prints a runtime's report and the policy's field table, as
// JSON with --json, else as the (wrapped) table.
func printPolicy(c *cli.Context, rep sandbox.Report, pol sandbox.Policy) error {
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			sandbox.Report
			Fields []probe.Field `json:"fields"`
		}{rep, probe.DescribePolicy(pol)})
	}
	return writePolicy(c.App.Writer, rep, tableWidth(c.App.Writer, c.Bool("wide")))
}

// writePolicy prints the policy table wrapped to width (0: one line a field).
func writePolicy(w io.Writer, rep sandbox.Report, width int) error {
	var rows [][]string
	for _, f := range probe.DescribePolicy(rep.Policy) {
		rows = append(rows, []string{f.Name, f.Value, f.Doc, f.Probe})
	}
	if err := writeWrapped(w, width, []string{"FIELD", "VALUE", "MEANING", "PROBES"}, rows); err != nil {
		return err
	}
	gv := "unavailable (runsc not registered with the engine)"
	if rep.GVisor {
		gv = "available"
	}
	fmt.Fprintf(w, "\nruntime:  %s (%s) at %s %s\nchosen:   %s\n", rep.Policy.Runtime, rep.RuntimeVersion, rep.RuntimePath, strings.Join(rep.RuntimeArgs, " "), rep.RuntimeChoice)
	fmt.Fprintf(w, "engine:   %s\nrunc:     %s\nkernel:   %s\nruntimes: %s\ngVisor:   %s\ndisk cap: %s\n",
		rep.Engine, rep.RuncVersion, rep.KernelVersion, strings.Join(rep.Runtimes, ", "), gv, rep.DiskCapEnforced)
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "WARNING: %s\n", warn)
	}
	return nil
}

func sandboxVerify(c *cli.Context) error {
	// An interrupted run still removes its containers and workspace: the
	// first signal cancels the probes, cleanup then runs on its own context.
	ctx, stop := signal.NotifyContext(ctxOf(c), os.Interrupt, syscall.SIGTERM)
	defer stop()
	probeBin, err := findBinary(c.String("probe"), "mass-probe")
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if c.String("backend") == "kubernetes" {
		return sandboxVerifyK8s(ctx, c, probeBin)
	}
	ref := sandbox.DefaultPolicy()
	ref.Runtime = c.String("runtime")
	o := probe.Options{Probe: probeBin, Reference: ref, Policy: ref, RaceOps: c.Int("race-ops")}
	for _, g := range strings.Split(c.String("groups"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			o.Groups = append(o.Groups, g)
		}
	}
	weakNames, egressWeak := probe.SplitEgress(strings.Split(c.String("weaken"), ","))
	egressOn := slices.Contains(o.Groups, probe.GroupEgress)
	o.Groups = slices.DeleteFunc(o.Groups, func(g string) bool { return g == probe.GroupEgress })
	expectFail, err := probe.Weaken(&o, weakNames)
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	img, err := verifyImage(ctx, c.String("image"))
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	o.Image = img
	rt, eng, err := openRuntime(c, o.Policy, img, o)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer eng.Close()
	defer rt.Close()
	o.Runtime, o.Engine = rt, eng
	if rep, err := rt.Report(ctx); err == nil && ref.Runtime != sandbox.RuntimeAuto && !slices.Contains(rep.Runtimes, ref.Runtime) {
		return cli.Exit(fmt.Sprintf("OCI runtime %q is not registered with this engine (it has: %s); for gVisor install runsc and register it in /etc/docker/daemon.json",
			ref.Runtime, strings.Join(rep.Runtimes, ", ")), 1)
	}
	if len(expectFail) > 0 {
		fmt.Fprintf(os.Stderr, "weakened policy (%s); expected to fail: %s\n", c.String("weaken"), strings.Join(expectFail, ", "))
	}
	for _, m := range probe.Moot(ref.Runtime, strings.Split(c.String("weaken"), ",")) {
		fmt.Fprintf(os.Stderr, "no hole on %s: %s\n", ref.Runtime, m)
	}
	var rep probe.Report
	if !egressOn || len(o.Groups) > 0 {
		if rep, err = probe.Run(ctx, o); err != nil {
			return cli.Exit(fmt.Sprintf("sandbox verify: %v", err), 1)
		}
	}
	if egressOn {
		if rep, err = mergeEgress(ctx, c, eng, rep, o, egressWeak); err != nil {
			return cli.Exit(fmt.Sprintf("sandbox verify egress: %v", err), 1)
		}
		rep.Groups = append(rep.Groups, probe.GroupEgress)
		rep.NotProven = probe.NotProven(rep.Groups, rep.Runtime)
	}
	if c.Bool("json") {
		if err := json.NewEncoder(c.App.Writer).Encode(rep); err != nil {
			return err
		}
	} else if err := writeVerify(c.App.Writer, rep, tableWidth(c.App.Writer, c.Bool("wide"))); err != nil {
		return err
	}
	if rep.Failed > 0 {
		return cli.Exit(fmt.Sprintf("sandbox verify: %d probes failed: %s", rep.Failed, strings.Join(rep.Failing(), ", ")), 1)
	}
	return nil
}

// verifyImage picks the image the probes run in: the flag, else the agent
// image when built, else the busybox test image (built on demand).
func verifyImage(ctx context.Context, flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	eng, err := dockerEngine()
	if err != nil {
		return "", err
	}
	defer eng.Close()
	if _, err := eng.ImageInspect(ctx, image.AgentRef); err == nil {
		return image.AgentRef, nil
	}
	fmt.Fprintf(os.Stderr, "note: %s not built (run `massctl image build --agent`); probing with %s\n", image.AgentRef, image.TestRef)
	res, err := image.EnsureTest(ctx, eng)
	if err != nil {
		return "", fmt.Errorf("ensure test image: %w", err)
	}
	return res.Ref, nil
}

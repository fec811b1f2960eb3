package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/kubernetes"
	"github.com/mass-dev/mass/sandbox/probe"
)

// openK8s opens the kubernetes backend for massctl's sandbox commands.
func openK8s(ctx context.Context, c *cli.Context, pol sandbox.Policy, img string) (*kubernetes.Runtime, error) {
	kc := c.String("kubeconfig")
	if kc == "" {
		kc = os.Getenv("MASS_K8S_KUBECONFIG")
	}
	return kubernetes.New(ctx, kubernetes.Config{Kubeconfig: kc, Namespace: c.String("namespace"),
		DaemonID: fmt.Sprintf("massctl-%d", os.Getpid()), Image: img, Policy: pol,
		SeccompLocalhost: os.Getenv("MASS_K8S_SECCOMP"),
		Logger:           slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
}

func sandboxPolicyK8s(c *cli.Context) error {
	pol := sandbox.DefaultPolicy()
	pol.Runtime = c.String("runtime")
	rt, err := openK8s(ctxOf(c), c, pol, "")
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer rt.Close()
	rep, err := rt.Report(ctxOf(c))
	if err != nil {
		return cli.Exit(fmt.Sprintf("sandbox report: %v", err), 1)
	}
	return printPolicy(c, rep, pol)
}

// sandboxVerifyK8s runs the probes in pods of the cluster. The egress
// group and the weakenings that exist only as Docker engine settings are
// refused: the kubernetes backend offers neither.
func sandboxVerifyK8s(ctx context.Context, c *cli.Context, probeBin string) error {
	ref := sandbox.DefaultPolicy()
	ref.Runtime = c.String("runtime")
	o := probe.Options{Probe: probeBin, Reference: ref, Policy: ref, RaceOps: c.Int("race-ops")}
	for _, g := range strings.Split(c.String("groups"), ",") {
		if g = strings.TrimSpace(g); g != "" && g != probe.GroupEgress {
			o.Groups = append(o.Groups, g)
		}
	}
	weak, egressWeak := probe.SplitEgress(strings.Split(c.String("weaken"), ","))
	if len(egressWeak) > 0 {
		return cli.Exit("the kubernetes backend has no egress proxy: egress weakenings do not apply", 2)
	}
	img := c.String("image")
	if img == "" {
		img = kubernetes.DefaultImage
	}
	o.Image = img
	// The runtime opens with the reference policy and resolves auto; the
	// probes' boxes get the (weakened) o.Policy in their specs.
	rt, err := openK8s(ctx, c, ref, img)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer rt.Close()
	o.Runtime = rt
	if rep, err := rt.Report(ctx); err == nil {
		o.Reference.Runtime, o.Policy.Runtime = rep.Policy.Runtime, rep.Policy.Runtime
	}
	expectFail, err := probe.WeakenOn(probe.BackendKubernetes, &o, weak)
	if err != nil {
		return cli.Exit(err.Error(), 2)
	}
	if o.ReadableHelper || o.EngineMasks {
		return cli.Exit("weakenings readable_helper and engine_masks are Docker engine settings; the kubernetes backend has no such switch", 2)
	}
	if len(expectFail) > 0 {
		fmt.Fprintf(os.Stderr, "weakened policy (%s); expected to fail: %s\n", c.String("weaken"), strings.Join(expectFail, ", "))
	}
	for _, m := range probe.MootOn(probe.BackendKubernetes, o.Policy.Runtime, weak) {
		fmt.Fprintf(os.Stderr, "no hole on kubernetes/%s: %s\n", o.Policy.Runtime, m)
	}
	rep, err := probe.Run(ctx, o)
	if err != nil {
		return cli.Exit(fmt.Sprintf("sandbox verify: %v", err), 1)
	}
	rep.Groups = slices.DeleteFunc(rep.Groups, func(g string) bool { return g == probe.GroupEgress })
	if c.Bool("json") {
		if err := json.NewEncoder(c.App.Writer).Encode(rep); err != nil {
			return err
		}
	} else if err := probe.WriteTable(c.App.Writer, rep); err != nil {
		return err
	}
	for _, n := range rep.Failing() {
		if why, ok := probe.KubernetesBaseline(o.Policy.Runtime)[n]; ok {
			fmt.Fprintf(os.Stderr, "%s fails on every kubernetes run: %s\n", n, why)
		}
	}
	if rep.Failed > 0 {
		return cli.Exit(fmt.Sprintf("sandbox verify: %d probes failed: %s", rep.Failed, strings.Join(rep.Failing(), ", ")), 1)
	}
	return nil
}

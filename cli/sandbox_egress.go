package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/docker/docker/client"
	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/probe"
)

// verifyEgress runs the egress probes of `massctl sandbox verify --groups
// egress`: a stand-in internet on a network of its own, a runtime whose
// proxies reach only it, and the in-box and host-side egress checks.
func verifyEgress(ctx context.Context, eng *client.Client, ref sandbox.Policy, img, probeBin, helper string, weak []string) (probe.Report, []string, error) {
	proxy, err := findBinary("", "mass-egress-proxy")
	if err != nil {
		return probe.Report{}, nil, err
	}
	daemonID := fmt.Sprintf("massctl-%d", os.Getpid())
	name := fmt.Sprintf("mass-standin-%d", os.Getpid())
	labels := map[string]string{docker.LabelDaemon: daemonID, docker.LabelEpisode: "standin-" + fmt.Sprint(os.Getpid()), docker.LabelKind: "egress"}
	st, err := probe.StartStandin(ctx, eng, probeBin, img, name, labels)
	if err != nil {
		return probe.Report{}, nil, err
	}
	defer st.Close(context.WithoutCancel(ctx))
	base := ref
	ref.Egress = probe.DefaultEgress()
	pol := ref
	e := *ref.Egress
	pol.Egress = &e
	o := probe.EgressOptions{Engine: eng, Standin: st, Probe: probeBin, Image: img, Reference: ref, Policy: pol}
	fails := probe.WeakenEgress(&o, weak)
	rt, err := docker.New(ctx, docker.Config{DaemonID: daemonID, HelperPath: helper, Image: img, Policy: base, Client: eng,
		Egress: docker.EgressConfig{ProxyPath: proxy, Network: st.Network, DNS: []string{st.Address}, AllowPrivate: true,
			HostAddress: o.HostAddress},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		return probe.Report{}, nil, err
	}
	defer rt.Close()
	o.Runtime = rt
	rep, err := probe.RunEgress(ctx, o)
	return rep, fails, err
}

// mergeEgress runs the egress probes and appends them to rep.
func mergeEgress(ctx context.Context, c *cli.Context, eng *client.Client, rep probe.Report, o probe.Options, weak []string) (probe.Report, error) {
	helper, err := findBinary(c.String("helper"), "mass-sandbox-helper")
	if err != nil {
		return rep, err
	}
	erep, fails, err := verifyEgress(ctx, eng, o.Reference, o.Image, o.Probe, helper, weak)
	if err != nil {
		return rep, err
	}
	if len(fails) > 0 {
		fmt.Fprintf(os.Stderr, "weakened egress (%v); expected to fail: %v\n", weak, fails)
	}
	if rep.Runtime == "" {
		// Only the egress group ran: its report says what was probed.
		rep.Runtime, rep.RuntimeVersion, rep.RuntimeChoice = erep.Runtime, erep.RuntimeVersion, erep.RuntimeChoice
		rep.Image, rep.ImageID, rep.Engine = erep.Image, erep.ImageID, erep.Engine
	}
	rep.Probes = append(rep.Probes, erep.Probes...)
	rep.Passed += erep.Passed
	rep.Failed += erep.Failed
	return rep, nil
}

package probe

import (
	"context"
	"fmt"
	"slices"

	"github.com/mass-dev/mass/sandbox"
)

// describe resolves the boxes' OCI runtime and fills in what the report
// says was probed: runtime and version, image and its id, engine, and what
// the run does not prove.
func (r *run) describe(ctx context.Context) error {
	rep, err := r.o.Runtime.Report(ctx)
	if err != nil {
		return fmt.Errorf("verify: runtime report: %w", err)
	}
	r.runtime = r.o.Policy.Runtime
	if r.runtime == sandbox.RuntimeAuto {
		r.runtime = rep.Policy.Runtime
		r.report.RuntimeChoice = rep.RuntimeChoice
	}
	r.report.Runtime = r.runtime
	r.report.RuntimeVersion = rep.RuntimeVersion
	if rep.Policy.Runtime != r.runtime {
		// A named runtime other than the runtime's default: ask for its version alone.
		r.report.RuntimeVersion = "see `massctl sandbox policy --runtime " + r.runtime + "`"
	}
	r.report.Engine = rep.Engine
	r.report.Image = r.o.Image
	if r.report.Image == "" {
		r.report.Image = "the runtime's default image"
	}
	if r.o.Engine != nil && r.o.Image != "" {
		if in, err := r.o.Engine.ImageInspect(ctx, r.o.Image); err == nil {
			r.report.ImageID = in.ID
		}
	}
	r.report.Groups = slices.Clone(r.o.Groups)
	r.report.NotProven = NotProven(r.o.Groups, r.runtime)
	return nil
}

// NotProven lists what a run of groups on the OCI runtime does not show
// even when every probe passes.
func NotProven(groups []string, runtime string) []string {
	var out []string
	for _, g := range append(slices.Clone(AllGroups), GroupEgress) {
		if !slices.Contains(groups, g) {
			out = append(out, fmt.Sprintf("group %s did not run: its probes were not checked", g))
		}
	}
	out = append(out,
		"the probes try known routes out; they do not prove the absence of a kernel"+kernelOf(runtime)+" bug, a side channel (timing, CPU caches) or an attack nobody wrote a probe for",
		"only this runtime binary, this image and this engine were probed: another runtime, image, engine or kernel version needs its own run",
		"only the policy shown by `massctl sandbox policy` was probed: a task or daemon config that changes it is not covered",
		"the model endpoint, massd's API and the host outside the Docker engine are not probed",
	)
	return out
}

func kernelOf(runtime string) string {
	if runtime == sandbox.RuntimeRunsc {
		return " (gVisor Sentry or host)"
	}
	return " (host)"
}

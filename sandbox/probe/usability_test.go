package probe

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/sandbox/usable"
)

// TestVerifyUsability runs the everyday commands as the agent user in the
// agent image on each runtime: every one must exit 0 (on Debian's runsc
// 0.0~20221219 usable_ls_la and usable_stat fail with EINVAL).
func TestVerifyUsability(t *testing.T) {
	eachRuntime(t, func(t *testing.T, runtime string) {
		if testEngine == nil {
			t.Skip(testSkip)
		}
		if _, err := testEngine.ImageInspect(context.Background(), image.AgentRef); err != nil {
			t.Skipf("%s not built (massctl image build --agent): SKIPPED", image.AgentRef)
		}
		ref := testReference()
		ref.Runtime = runtime
		rep := verify(t, Options{Reference: ref, Policy: ref, Groups: []string{GroupUsability}, Image: image.AgentRef})
		var buf bytes.Buffer
		WriteTable(&buf, rep)
		t.Log("\n" + buf.String())
		if f := rep.Failing(); len(f) > 0 {
			t.Errorf("everyday commands failed on %s: %v", runtime, f)
		}
		if got, want := names(rep), usable.Names(); !slices.Equal(got, want) {
			t.Errorf("usability probes = %v, want %v", got, want)
		}
		if rep.Runtime != runtime || rep.RuntimeVersion == "" || !strings.HasPrefix(rep.ImageID, "sha256:") || rep.Engine == "" {
			t.Errorf("report does not say what was probed: runtime %q version %q image id %q engine %q", rep.Runtime, rep.RuntimeVersion, rep.ImageID, rep.Engine)
		}
	})
}

// TestUsabilityFailsWhereToolsAreMissing: the busybox test image has no
// python3, so the group must fail there, with the command's stderr shown;
// the shell builtins and busybox tools that exist still pass.
func TestUsabilityFailsWhereToolsAreMissing(t *testing.T) {
	ref := testReference()
	ref.Runtime = "runc"
	rep := verify(t, Options{Reference: ref, Policy: ref, Groups: []string{GroupUsability}})
	var buf bytes.Buffer
	WriteTable(&buf, rep)
	t.Log("\n" + buf.String())
	failed := rep.Failing()
	for _, want := range []string{"usable_python3_stack", "usable_python3_files"} {
		if !slices.Contains(failed, want) {
			t.Errorf("%s passed in the busybox image, which has no python3", want)
		}
	}
	for _, p := range rep.Probes {
		if p.Name == "usable_python3_stack" && !strings.Contains(p.Observed, "python3") {
			t.Errorf("failed command's observation lacks its stderr: %q", p.Observed)
		}
		if p.Name == "usable_mkdir_p" && !p.OK {
			t.Errorf("mkdir -p failed in the busybox image: %s", p.Observed)
		}
	}
}

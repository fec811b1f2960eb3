package refimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/taskspec"
)

// --image PROFILE: every imported spec names the profile, checked as the
// spec field is; a bad name is refused before anything is written.
func TestImportImageProfile(t *testing.T) {
	for _, profile := range []string{"research", "base", "gpu-lab"} {
		out := filepath.Join(t.TempDir(), "specs")
		lim := DefaultLimits
		lim.Image = profile
		rep, err := Import(fixture, out, lim)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		for _, tr := range rep.Tasks {
			s, err := taskspec.Load(tr.Spec)
			if err != nil {
				t.Fatal(err)
			}
			if s.Image != profile {
				t.Errorf("%s: image %q, want %q", tr.ID, s.Image, profile)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "specs")
	rep, err := Import(fixture, out, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := taskspec.Load(rep.Tasks[0].Spec); err != nil || s.Image != "" {
		t.Errorf("no --image: image %q, %v", s.Image, err)
	}
	for _, bad := range []string{"Research", "agent", "test", "x/y", "-a"} {
		out := filepath.Join(t.TempDir(), "specs")
		lim := DefaultLimits
		lim.Image = bad
		_, err := Import(fixture, out, lim)
		if err == nil || !strings.Contains(err.Error(), "image") {
			t.Errorf("image %q: %v, want an image error", bad, err)
		}
		if _, serr := os.Stat(out); !os.IsNotExist(serr) {
			t.Errorf("image %q: %s written despite the error", bad, out)
		}
	}
}

package examples

import (
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/taskspec"
)

// The research example tasks and the profile files load and validate, and
// each task names a profile that is built in or shipped here.
func TestResearchExamples(t *testing.T) {
	profiles := map[string]bool{sandbox.ProfileBase: true, sandbox.ProfileResearch: true}
	files, _ := filepath.Glob("profiles/*.yaml")
	for _, f := range files {
		p, err := image.LoadProfile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		profiles[p.Name] = true
	}
	tasks, _ := filepath.Glob("research/*/task.yaml")
	if len(tasks) == 0 || len(files) == 0 {
		t.Fatalf("no research tasks (%v) or profile files (%v)", tasks, files)
	}
	for _, f := range tasks {
		s, err := taskspec.Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if errs := taskspec.Validate(s); len(errs) > 0 {
			t.Errorf("%s: %v", f, errs)
		}
		if !profiles[s.Image] {
			t.Errorf("%s: image %q is neither built in nor in profiles/", f, s.Image)
		}
	}
}

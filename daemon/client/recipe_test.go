package client

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mass-dev/mass/taskspec"
)

// TestWithRecipe: a recipe beside the spec is uploaded; one an input would
// copy into the workspace is refused before anything is sent.
func TestWithRecipe(t *testing.T) {
	dir := t.TempDir()
	spec := &taskspec.Spec{ID: "t1", Dir: dir, Inputs: []taskspec.Input{{Path: "data"}}}
	if got, _ := withRecipe(spec, []string{"data/a.csv"}); !slices.Equal(got, []string{"data/a.csv"}) {
		t.Errorf("no recipe: %v", got)
	}
	if err := os.WriteFile(filepath.Join(dir, taskspec.RecipeFile), []byte(`{"files": {"a": "b"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := withRecipe(spec, []string{"data/a.csv"}); err != nil || !slices.Contains(got, taskspec.RecipeFile) {
		t.Errorf("recipe beside the spec: %v, %v", got, err)
	}
	spec.Inputs = append(spec.Inputs, taskspec.Input{Path: "./" + taskspec.RecipeFile})
	if _, err := withRecipe(spec, nil); err == nil || !strings.Contains(err.Error(), "workspace") {
		t.Errorf("recipe as an input: %v", err)
	}
}

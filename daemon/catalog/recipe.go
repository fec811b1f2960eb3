package catalog

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// checkRecipe refuses an upload whose scripted-recipe.json is malformed or
// would reach a workspace: the recipe holds the task's answers, so it is
// kept beside the spec and is never an input.
func checkRecipe(dir string, spec *taskspec.Spec) error {
	if _, err := os.Lstat(filepath.Join(dir, taskspec.RecipeFile)); err != nil {
		return nil // no recipe: the scripted model writes the required outputs
	}
	if _, err := scripted.ReadRecipe(dir, spec.ID); err != nil {
		return fmt.Errorf("%v: %w", err, api.ErrInvalid)
	}
	for _, in := range spec.Inputs {
		if p := path.Clean(in.Path); p == taskspec.RecipeFile || p == "." {
			return fmt.Errorf("task %s: input %q would put %s, which holds the scripted answers, into the workspace; keep it beside the spec only: %w",
				spec.ID, in.Path, taskspec.RecipeFile, api.ErrInvalid)
		}
	}
	return nil
}

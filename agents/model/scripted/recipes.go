package scripted

import (
	"encoding/json"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/mass-dev/mass/examples"
)

// Recipe is an example task's scripted recipe
// (examples/tasks/<task>/scripted-recipe.json): the deliverables the
// scripted executor writes when the task prompt contains Match.
type Recipe struct {
	TaskID string            `json:"task_id"`
	Match  string            `json:"match"`
	Files  map[string]string `json:"files"`  // workspace-relative path -> content
	Verify string            `json:"verify"` // shell command a worker runs to check them
	// FailSkip is the file a failing seed leaves out, so that the task's grader fails.
	FailSkip string `json:"fail_skip"`
}

var recipes = loadRecipes()

func loadRecipes() []Recipe {
	paths, _ := fs.Glob(examples.Recipes, "tasks/*/scripted-recipe.json")
	var out []Recipe
	for _, p := range paths {
		b, err := fs.ReadFile(examples.Recipes, p)
		if err != nil {
			continue
		}
		var r Recipe
		if json.Unmarshal(b, &r) == nil && r.Match != "" && len(r.Files) > 0 {
			if r.TaskID == "" {
				r.TaskID = path.Base(path.Dir(p))
			}
			out = append(out, r)
		}
	}
	return out
}

// recipeFor finds the recipe of a task prompt, or nil.
func recipeFor(prompt string) *Recipe {
	for i := range recipes {
		if strings.Contains(prompt, recipes[i].Match) {
			return &recipes[i]
		}
	}
	return nil
}

func recipeByID(id string) *Recipe {
	for i := range recipes {
		if recipes[i].TaskID == id {
			return &recipes[i]
		}
	}
	return nil
}

// deliverables lists a recipe's files in a stable order.
func (r *Recipe) deliverables() []string {
	names := make([]string, 0, len(r.Files))
	for n := range r.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

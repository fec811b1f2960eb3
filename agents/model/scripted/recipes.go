package scripted

import (
	"encoding/json"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/mass-dev/mass/examples"
)

// Recipe is a task's scripted recipe (scripted-recipe.json beside its
// spec; the example tasks' are also compiled in, from
// examples/tasks/<task>/): the deliverables the scripted executor writes.
// A compiled-in recipe applies when the task prompt contains Match.
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

// recipeFor finds the recipe of a teacher prompt: the stored task's own
// recipe, else a compiled-in example's, else one that writes the stored
// task's required outputs as labelled dry-run files; nil when none fits.
func recipeFor(tasks Tasks, prompt string) *Recipe {
	var t Task
	ok := false
	if tasks != nil {
		t, ok = tasks.ByPrompt(prompt)
	}
	return resolve(t, ok, prompt)
}

// recipeOf is recipeFor for a worker, which knows only the recipe id.
func recipeOf(tasks Tasks, id string) *Recipe {
	if tasks != nil {
		if t, ok := tasks.ByID(id); ok {
			return resolve(t, true, t.Prompt)
		}
	}
	return recipeByID(id)
}

func resolve(t Task, stored bool, prompt string) *Recipe {
	if stored && t.Recipe != nil {
		return t.Recipe
	}
	for i := range recipes {
		if strings.Contains(prompt, recipes[i].Match) {
			return &recipes[i]
		}
	}
	if stored {
		return t.recipe()
	}
	return nil
}

// recipeByID is the compiled-in example recipe of that id, or nil.
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

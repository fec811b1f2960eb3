package generation

import "github.com/mass-dev/mass/jobwire"

// Recipe is a generation's training section (jobwire.Recipe).
type Recipe = jobwire.Recipe

// recipeWindow is r's window, 0 (the default) for no recipe.
func recipeWindow(r *Recipe) int {
	if r == nil {
		return 0
	}
	return r.Window
}

// recipeOverlap is r's context overlap, 0 (the default) for no recipe.
func recipeOverlap(r *Recipe) int {
	if r == nil {
		return 0
	}
	return r.ContextOverlap
}

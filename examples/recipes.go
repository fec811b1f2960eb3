// Package examples embeds the scripted dry-run recipes that ship beside the
// example tasks (tasks/*/scripted-recipe.json): the deliverables the
// scripted model's executor writes for each task.
package examples

import "embed"

// Recipes holds tasks/<task>/scripted-recipe.json.
//
//go:embed tasks/*/scripted-recipe.json
var Recipes embed.FS

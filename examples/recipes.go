// Package examples embeds the scripted dry-run recipes that ship beside the
// example tasks (tasks/*/scripted-recipe.json): the deliverables the
// scripted model's executor writes for each task. `task add` now uploads a
// task folder's recipe and massd reads it from the stored task at run time;
// these compiled-in copies are the fallback for example tasks stored
// without one (added before recipes were uploaded).
package examples

import "embed"

// Recipes holds tasks/<task>/scripted-recipe.json.
//
//go:embed tasks/*/scripted-recipe.json
var Recipes embed.FS

package scripted

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/taskspec"
)

// RecipeFile is the name of a task's own scripted recipe
// (taskspec.RecipeFile).
const RecipeFile = taskspec.RecipeFile

// Task is what the scripted model knows of a stored task at run time.
type Task struct {
	ID       string
	Prompt   string   // the bare task prompt, found verbatim in the teacher prompt
	Required []string // required_outputs globs
	Recipe   *Recipe  // the task's own scripted-recipe.json; nil when it has none
}

// Tasks looks stored tasks up while the model serves; massd backs it with
// its task store. A nil Tasks leaves only the compiled-in example recipes.
type Tasks interface {
	// ByPrompt is the task whose prompt the teacher prompt holds.
	ByPrompt(teacher string) (Task, bool)
	// ByID is the task of that id.
	ByID(id string) (Task, bool)
}

// ReadRecipe reads dir's scripted-recipe.json; nil, nil when there is none.
func ReadRecipe(dir, taskID string) (*Recipe, error) {
	b, err := os.ReadFile(filepath.Join(dir, RecipeFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read scripted recipe: %w", err)
	}
	return ParseRecipe(b, taskID)
}

// ParseRecipe parses a task's scripted-recipe.json and checks that every
// file it writes is a plain workspace-relative path.
func ParseRecipe(b []byte, taskID string) (*Recipe, error) {
	var r Recipe
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("parse %s of task %s: %w", RecipeFile, taskID, err)
	}
	if len(r.Files) == 0 {
		return nil, fmt.Errorf("%s of task %s has no files: give \"files\": {\"PATH\": \"CONTENT\"}", RecipeFile, taskID)
	}
	for name := range r.Files {
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == "." || strings.HasPrefix(name, "../") || name == ".." {
			return nil, fmt.Errorf("%s of task %s: file %q is not a clean path relative to /workspace", RecipeFile, taskID, name)
		}
	}
	r.TaskID = taskID // workers find it by the stored task's id
	return &r, nil
}

// recipe is the task's own recipe, else a dry-run recipe that writes one
// labelled file per required output.
func (t Task) recipe() *Recipe {
	if t.Recipe != nil {
		return t.Recipe
	}
	r := &Recipe{TaskID: t.ID, Files: map[string]string{}}
	for _, g := range t.Required {
		if name := concrete(g); name != "" {
			r.Files[name] = dryContent(name, t.ID, g)
		}
	}
	if len(r.Files) == 0 {
		return nil
	}
	return r
}

// concrete is one workspace path the glob g matches ("results/*.json" ->
// "results/dry-run.json"), or "" when none could be made.
func concrete(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			for i+1 < len(g) && g[i+1] == '*' {
				i++
			}
			b.WriteString("dry-run")
		case '?':
			b.WriteByte('x')
		case '[':
			end := strings.IndexByte(g[i:], ']')
			if end < 0 {
				return ""
			}
			class := strings.TrimPrefix(g[i+1:i+end], "^")
			if len(class) == 0 || class != g[i+1:i+end] {
				return "" // a negated class: no easy member
			}
			b.WriteByte(class[0])
			i += end
		case '\\':
			if i+1 < len(g) {
				i++
				b.WriteByte(g[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	name := b.String()
	if ok, _ := path.Match(g, name); !ok || name == "" || name == "." {
		return ""
	}
	return name
}

// dryContent is a required output's dry-run content, labelled in the
// file's own format.
func dryContent(name, taskID, glob string) string {
	note := fmt.Sprintf("%s placeholder for required output %q of task %s, written by the scripted model: not a real answer.", Label, glob, taskID)
	switch strings.ToLower(path.Ext(name)) {
	case ".json":
		b, _ := json.Marshal(map[string]any{"dry_run": true, "note": note})
		return string(b) + "\n"
	case ".csv":
		return "dry_run,note\ntrue," + strings.ReplaceAll(note, ",", ";") + "\n"
	case ".py", ".sh", ".yaml", ".yml", ".toml":
		return "# " + note + "\n"
	}
	return "# Dry run " + Label + "\n\n" + note + "\n"
}

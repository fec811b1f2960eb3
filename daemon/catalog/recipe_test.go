package catalog

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
)

// withRecipe is writeTask(doc) plus a scripted-recipe.json beside the spec.
func withRecipe(doc, recipe string) func(dir string) error {
	return func(dir string) error {
		if err := writeTask(doc)(dir); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "scripted-recipe.json"), []byte(recipe), 0o640)
	}
}

// TestAddKeepsRecipe: a good recipe is stored beside the spec; a malformed
// one, or one an input would copy into the workspace, is refused.
func TestAddKeepsRecipe(t *testing.T) {
	ctx := context.Background()
	l := datadir.New(t.TempDir())
	st, err := store.Open(ctx, l.DB())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := New(st, l, slog.New(slog.DiscardHandler))

	if _, err := c.Add(ctx, withRecipe(specDoc, `{"files": {"out.md": "answer"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(l.Task("up1"), "scripted-recipe.json")); err != nil {
		t.Errorf("recipe not kept beside the spec: %v", err)
	}
	for name, up := range map[string]func(string) error{
		"malformed":   withRecipe(strings.Replace(specDoc, "up1", "up2", 1), `{"files": {"../x": "y"}}`),
		"as an input": withRecipe("id: up3\nprompt: p\ninputs: [scripted-recipe.json]\nlimits: {episode_wall_time: 1m, agent_turns: 3}\n", `{"files": {"a": "b"}}`),
	} {
		if _, err := c.Add(ctx, up); !errors.Is(err, api.ErrInvalid) || !strings.Contains(err.Error(), "scripted-recipe.json") {
			t.Errorf("%s recipe: Add = %v, want invalid naming the recipe", name, err)
		}
	}
}

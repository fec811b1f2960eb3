package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sweep removes the episode folders a RemoveEpisode cut off by a crash set
// aside (episodes/.removing-*: their rows are gone) and what a daemon
// killed in the middle of a task upload left in
// <data-dir>/tasks: staging folders (.incoming-*) and task folders that never got
// their row. The client of such an upload was never told it succeeded, so nothing it
// was promised is lost, and a retry of the same id is no longer refused as a
// conflict. It runs once at start-up, before the API serves. Entries are removed,
// never followed.
func (c *Catalog) Sweep(ctx context.Context) error {
	if err := c.sweepRemovedEpisodes(); err != nil {
		return err
	}
	st, log := c.store, c.log
	tasksDir := c.layout.Tasks()
	ents, err := os.ReadDir(tasksDir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", tasksDir, err)
	}
	tasks, err := st.Tasks(ctx)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		known[filepath.Base(t.Dir)] = true
	}
	for _, e := range ents {
		name := e.Name()
		staged := strings.HasPrefix(name, stagingPrefix)
		if !staged && known[name] {
			continue
		}
		if !staged && !e.IsDir() {
			continue // not ours: leave files a person put here alone
		}
		if err := os.RemoveAll(filepath.Join(tasksDir, name)); err != nil {
			return fmt.Errorf("remove unfinished upload %s: %w", name, err)
		}
		log.Warn("removed an unfinished task upload", "entry", name, "staging", staged)
	}
	return nil
}

func (c *Catalog) sweepRemovedEpisodes() error {
	dir := c.layout.Episodes()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), removingPrefix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("remove %s: %w", e.Name(), err)
		}
		c.log.Warn("removed an episode folder a crash left set aside", "entry", e.Name())
	}
	return nil
}

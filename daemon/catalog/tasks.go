package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// RemoveTask deletes a task's row and folder. A task that jobs reference is
// refused (api.ErrConflict, naming them) unless force; a task with a job
// still queued or running is refused even with force. The row goes first:
// a crash before the folder is gone leaves a folder without a row, which
// Sweep removes at the next start.
func (c *Catalog) RemoveTask(ctx context.Context, id string, force bool) (api.Task, error) {
	if !datadir.ValidID(id) {
		return api.Task{}, fmt.Errorf("task id %q is not valid: %w", id, api.ErrInvalid)
	}
	t, err := c.store.Task(ctx, id)
	if err != nil {
		return t, err
	}
	if err := c.checkJobs(ctx, id, force, "remove"); err != nil {
		return t, err
	}
	if err := c.store.DeleteTask(ctx, id); err != nil {
		return t, err
	}
	if err := os.RemoveAll(c.layout.Task(id)); err != nil {
		c.log.Warn("task row removed, folder left for the next start's sweep", "task", id, "err", err)
	}
	c.log.Info("task removed", "task", id, "forced", force)
	return t, nil
}

// checkJobs refuses to change a task that live jobs use, and, unless
// force, one that any job references.
func (c *Catalog) checkJobs(ctx context.Context, id string, force bool, verb string) error {
	js, err := c.store.Jobs(ctx, store.JobFilter{TaskID: id, Limit: 1000})
	if err != nil {
		return err
	}
	var live, all []string
	for _, j := range js {
		all = append(all, j.ID)
		if !api.Terminal(j.State) {
			live = append(live, j.ID)
		}
	}
	if len(live) > 0 {
		return fmt.Errorf("task %s has jobs queued or running (%s); cancel them first (massctl job cancel %s): %w",
			id, strings.Join(live, ", "), live[0], api.ErrConflict)
	}
	if len(all) > 0 && !force {
		return fmt.Errorf("task %s is referenced by %d jobs (%s); their records would name a task that is gone; %s it anyway with --force: %w",
			id, len(all), shortList(all, 5), verb, api.ErrConflict)
	}
	return nil
}

func shortList(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(", … %d more", len(ids)-n)
}

// Update replaces stored task id with a new upload of the same id: the
// upload is staged and validated as by Add, then swapped with the stored
// folder in one atomic rename (RENAME_EXCHANGE) and the row rewritten; a
// failure swaps them back. A spec naming another id is refused
// (api.ErrInvalid), and so is a task with live jobs (api.ErrConflict).
// Jobs that finished keep their records; their work dirs hold what they used.
func (c *Catalog) Update(ctx context.Context, id string, unpack func(dir string) error) (api.Task, error) {
	old, err := c.store.Task(ctx, id)
	if err != nil {
		return old, err
	}
	if err := c.checkJobs(ctx, id, true, "update"); err != nil {
		return old, err
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(c.layout.Tasks(), stagingPrefix+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(tmp, 0o750); err != nil {
		return old, fmt.Errorf("create %s: %w", tmp, err)
	}
	keepTmp := false
	defer func() {
		if !keepTmp {
			os.RemoveAll(tmp) // after the swap it holds the old version
		}
	}()
	if err := unpack(tmp); err != nil {
		return old, err
	}
	spec, err := taskspec.Load(filepath.Join(tmp, taskspec.FileName))
	if err != nil {
		return old, fmt.Errorf("%s: %w", strings.ReplaceAll(err.Error(), tmp+"/", ""), api.ErrInvalid)
	}
	if err := checkRecipe(tmp, spec); err != nil {
		return old, err
	}
	if spec.ID != id {
		return old, fmt.Errorf("the uploaded spec's id is %q, not %q; add it as a new task (massctl task add): %w", spec.ID, id, api.ErrInvalid)
	}
	dir := c.layout.Task(id)
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); err != nil {
		return old, fmt.Errorf("swap task %s into place: %w", id, err)
	}
	t := api.Task{ID: id, Created: old.Created, Dir: dir, Spec: *spec}
	if err := c.store.UpdateTask(ctx, t); err != nil {
		if rerr := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_EXCHANGE); rerr != nil {
			keepTmp = true
			c.log.Error("put the old task folder back", "task", id, "old", tmp, "err", rerr)
		}
		return old, err
	}
	c.log.Info("task updated", "task", id)
	return t, nil
}

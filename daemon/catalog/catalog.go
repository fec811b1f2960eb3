// Package catalog is massd's task catalog: a stored task is a folder under
// the data dir's tasks/ plus its row in the store, and this package keeps
// the two together. Add is the upload transaction (stage, validate, move
// into place, record; undo on any failure) and Sweep removes what a crash
// in the middle of one left. The HTTP layer only decodes the upload.
package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/taskspec"
)

// stagingPrefix names the folders an upload is unpacked into before it is
// validated; Sweep removes those a crash left.
const stagingPrefix = ".incoming-"

// Catalog adds, lists and sweeps tasks. Safe for concurrent use: two uploads
// of one id race on the rename, and exactly one wins.
type Catalog struct {
	store  *store.Store
	layout datadir.Layout
	log    *slog.Logger
}

// New returns the catalog of the tasks in st and under l.
func New(st *store.Store, l datadir.Layout, log *slog.Logger) *Catalog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Catalog{store: st, layout: l, log: log}
}

// List returns every stored task.
func (c *Catalog) List(ctx context.Context) ([]api.Task, error) { return c.store.Tasks(ctx) }

// Get returns one task; the error wraps api.ErrNotFound if there is none.
func (c *Catalog) Get(ctx context.Context, id string) (api.Task, error) { return c.store.Task(ctx, id) }

// Add stores a task: unpack writes the upload (spec.yaml and the files it
// names) into a fresh staging directory; Add validates it, moves it to
// <data-dir>/tasks/<id>, and only then records the task. A failure at any
// step leaves neither the folder nor the row behind. An invalid spec wraps
// api.ErrInvalid, an existing id api.ErrConflict.
func (c *Catalog) Add(ctx context.Context, unpack func(dir string) error) (api.Task, error) {
	tasksDir := c.layout.Tasks()
	if err := os.MkdirAll(tasksDir, 0o750); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", tasksDir, err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(tasksDir, stagingPrefix+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(tmp, 0o750); err != nil {
		return api.Task{}, fmt.Errorf("create %s: %w", tmp, err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	if err := unpack(tmp); err != nil {
		return api.Task{}, err
	}
	spec, err := taskspec.Load(filepath.Join(tmp, taskspec.FileName))
	if err != nil {
		return api.Task{}, fmt.Errorf("%s: %w", strings.ReplaceAll(err.Error(), tmp+"/", ""), api.ErrInvalid)
	}
	if err := checkRecipe(tmp, spec); err != nil {
		return api.Task{}, err
	}
	dir := c.layout.Task(spec.ID)
	if _, err := os.Lstat(dir); err == nil {
		return api.Task{}, fmt.Errorf("task %s already exists: %w", spec.ID, api.ErrConflict)
	}
	// The folder goes into place first: a row is never written for a
	// folder that is not there.
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, fs.ErrExist) { // another upload of this id won the race
			return api.Task{}, fmt.Errorf("task %s already exists: %w", spec.ID, api.ErrConflict)
		}
		return api.Task{}, fmt.Errorf("store task %s: %w", spec.ID, err)
	}
	keep = true
	t := api.Task{ID: spec.ID, Created: time.Now().UTC(), Dir: dir, Spec: *spec}
	if err := c.store.CreateTask(ctx, t); err != nil {
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			c.log.Error("remove task folder after a failed insert", "task", spec.ID, "dir", dir, "err", rmErr)
		}
		return api.Task{}, err
	}
	c.log.Info("task added", "task", spec.ID, "dir", dir)
	return t, nil
}

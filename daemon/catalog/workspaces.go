package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/episodefmt"
)

// RemoveWorkspace deletes an episode's exported workspace (workspace.tar),
// the bulk of its disk use, and keeps everything else: the record, the
// trajectory, the ledger, the guards, workspace.manifest.json (what the
// workspace held, with hashes). removed is false when there was no export.
// A running episode is refused like RemoveEpisode.
func (c *Catalog) RemoveWorkspace(ctx context.Context, id string) (e api.Episode, removed bool, err error) {
	if !datadir.ValidID(id) {
		return api.Episode{}, false, fmt.Errorf("episode id %q is not valid: %w", id, api.ErrInvalid)
	}
	if e, err = c.store.Episode(ctx, id); err != nil {
		return e, false, err
	}
	if e.Status == "running" && c.jobLive(ctx, e.JobID) {
		return e, false, fmt.Errorf("episode %s is running; cancel its job first (massctl job cancel %s): %w", id, e.JobID, api.ErrConflict)
	}
	p := filepath.Join(c.layout.Episode(id), episodefmt.ExportFile)
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return e, false, nil
	}
	if err != nil || !st.Mode().IsRegular() {
		return e, false, fmt.Errorf("episode %s: %s is not a regular file; left alone: %w", id, episodefmt.ExportFile, api.ErrConflict)
	}
	if err := os.Remove(p); err != nil {
		return e, false, fmt.Errorf("remove workspace of episode %s: %w", id, err)
	}
	c.log.Info("episode workspace removed", "episode", id, "bytes", st.Size())
	return e, true, nil
}

// Retention says which finished episodes keep their exported workspace.
// Zero fields keep everything.
type Retention struct {
	// KeepFor keeps the workspaces of episodes updated within this long.
	KeepFor time.Duration
	// KeepLast keeps the workspaces of the newest N episodes, whatever their age.
	KeepLast int
}

// PruneWorkspaces removes the exported workspaces of finished episodes
// that r no longer keeps (older than KeepFor and not among the newest
// KeepLast), never a record. It returns the episodes pruned.
func (c *Catalog) PruneWorkspaces(ctx context.Context, r Retention, now time.Time) ([]string, error) {
	if r.KeepFor <= 0 && r.KeepLast <= 0 {
		return nil, nil
	}
	es, err := c.store.Episodes(ctx, store.EpisodeFilter{Limit: 1 << 30})
	if err != nil {
		return nil, err
	}
	var pruned []string
	for i, e := range es { // newest first
		if e.Status == "running" || i < r.KeepLast || (r.KeepFor > 0 && now.Sub(e.Updated) < r.KeepFor) {
			continue
		}
		if _, removed, err := c.RemoveWorkspace(ctx, e.ID); err != nil {
			c.log.Warn("retention: workspace not removed", "episode", e.ID, "err", err)
		} else if removed {
			pruned = append(pruned, e.ID)
		}
	}
	return pruned, nil
}

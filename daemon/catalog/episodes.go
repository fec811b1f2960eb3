package catalog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/episodefmt"
)

// removingPrefix names an episode directory set aside by RemoveEpisode;
// Sweep-like cleanup may delete what a crash left.
const removingPrefix = ".removing-"

// EpisodeFiles lists the files the API serves of episode id that exist:
// the top-level record files and manifests/<agent>.json, regular files only
// (links and other kinds are left out, never followed).
func (c *Catalog) EpisodeFiles(ctx context.Context, id string) ([]api.EpisodeFile, error) {
	if _, err := c.store.Episode(ctx, id); err != nil {
		return nil, err
	}
	dir := c.layout.Episode(id)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("episode %s has no directory (removed or not started): %w", id, api.ErrNotFound)
	}
	out := []api.EpisodeFile{}
	add := func(name string) {
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(name)))
		if err == nil && st.Mode().IsRegular() {
			out = append(out, api.EpisodeFile{Name: name, Size: st.Size(), Modified: st.ModTime().UTC()})
		}
	}
	for _, f := range episodefmt.TopLevelFiles {
		add(f)
	}
	mdir := filepath.Join(dir, episodefmt.ManifestsDir)
	if st, err := os.Lstat(mdir); err == nil && st.IsDir() {
		ents, err := os.ReadDir(mdir)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", mdir, err)
		}
		var names []string
		for _, e := range ents {
			agent, ok := strings.CutSuffix(e.Name(), ".json")
			if ok && datadir.ValidID(agent) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			add(path.Join(episodefmt.ManifestsDir, n))
		}
	}
	return out, nil
}

// RemoveEpisode deletes an episode's record and directory. A running
// episode whose job is not finished is refused (api.ErrConflict) with the job to cancel first. The
// directory is first renamed aside, so a failure to delete the row puts it
// back and nothing is lost; a crash after the row is gone leaves only a
// .removing-* folder.
func (c *Catalog) RemoveEpisode(ctx context.Context, id string) (api.Episode, error) {
	if !datadir.ValidID(id) {
		return api.Episode{}, fmt.Errorf("episode id %q is not valid: %w", id, api.ErrInvalid)
	}
	e, err := c.store.Episode(ctx, id)
	if err != nil {
		return e, err
	}
	if e.Status == "running" && c.jobLive(ctx, e.JobID) {
		return e, fmt.Errorf("episode %s is running; cancel its job first (massctl job cancel %s): %w", id, e.JobID, api.ErrConflict)
	}
	dir := c.layout.Episode(id)
	var rnd [4]byte
	rand.Read(rnd[:])
	aside := filepath.Join(c.layout.Episodes(), removingPrefix+id+"-"+hex.EncodeToString(rnd[:]))
	moved := true
	if err := os.Rename(dir, aside); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return e, fmt.Errorf("remove episode %s: %w", id, err)
		}
		moved = false // the record outlived its folder
	}
	if err := c.store.DeleteEpisode(ctx, id); err != nil {
		if moved {
			if rerr := os.Rename(aside, dir); rerr != nil {
				c.log.Error("put an episode folder back", "episode", id, "dir", aside, "err", rerr)
			}
		}
		return e, err
	}
	if moved {
		if err := os.RemoveAll(aside); err != nil {
			c.log.Warn("episode record removed, folder left", "episode", id, "dir", aside, "err", err)
		}
	}
	c.log.Info("episode removed", "episode", id)
	return e, nil
}

// jobLive reports whether job id may still be running its episode: queued,
// or running, or the store cannot say.
func (c *Catalog) jobLive(ctx context.Context, id string) bool {
	j, err := c.store.Job(ctx, id)
	if err != nil {
		return !errors.Is(err, api.ErrNotFound)
	}
	return !api.Terminal(j.State)
}

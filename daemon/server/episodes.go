package server

import (
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/episodefmt"
)

// EpisodeFiles are the only top-level files served from an episode
// directory; manifests/<agent>.json is served too.
var EpisodeFiles = episodefmt.TopLevelFiles

// ValidEpisodeID reports whether id may name an episode directory: the data
// dir's one id rule.
func ValidEpisodeID(id string) bool { return datadir.ValidID(id) }

// episodeFilePath checks name against the allowed set and splits it into
// path components; false if it is not allowed.
func episodeFilePath(name string) ([]string, bool) {
	for _, f := range EpisodeFiles {
		if name == f {
			return []string{f}, true
		}
	}
	dir, file := path.Split(name)
	if dir != episodefmt.ManifestsDir+"/" || !strings.HasSuffix(file, ".json") {
		return nil, false
	}
	agent := strings.TrimSuffix(file, ".json")
	if !datadir.ValidID(agent) || strings.Contains(file, "..") {
		return nil, false
	}
	return []string{episodefmt.ManifestsDir, file}, true
}

func (s *Server) listEpisodes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	es, err := s.o.Store.Episodes(r.Context(), store.EpisodeFilter{JobID: q.Get("job"), TaskID: q.Get("task"), Status: q.Get("status"), Limit: int(limit)})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, es)
}

func (s *Server) getEpisode(w http.ResponseWriter, r *http.Request) error {
	e, err := s.o.Store.Episode(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, e)
}

func (s *Server) removeEpisode(w http.ResponseWriter, r *http.Request) error {
	e, err := s.tasks.RemoveEpisode(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, e)
}

func (s *Server) listEpisodeFiles(w http.ResponseWriter, r *http.Request) error {
	fs, err := s.tasks.EpisodeFiles(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, fs)
}

// listModels lists the models massd can call and, merged by name, the
// lineage of every model a generation registered in the store.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) error {
	ms := []api.Model{}
	if s.o.Models != nil {
		ms = s.o.Models()
	}
	if s.o.Store != nil {
		reg, err := s.o.Store.Models(r.Context())
		if err != nil {
			return err
		}
		ms = withLineage(ms, reg)
	}
	return writeJSON(w, http.StatusOK, ms)
}

// withLineage fills each registered generation's fields into its entry of
// ms, appending the ones massd cannot call (yet).
func withLineage(ms []api.Model, reg []store.Model) []api.Model {
	at := map[string]int{}
	for i, m := range ms {
		at[m.Name] = i
	}
	for _, g := range reg {
		i, ok := at[g.Name]
		if !ok {
			ms = append(ms, api.Model{Name: g.Name, Error: "registered by a generation but not served by this massd"})
			i = len(ms) - 1
		}
		m := &ms[i]
		m.G, m.Parent, m.Weights, m.Tokenizer, m.Adapter, m.JobID = g.G, g.Parent, g.Weights, g.Tokenizer, g.Adapter, g.JobID
	}
	return ms
}

func (s *Server) testModel(w http.ResponseWriter, r *http.Request) error {
	if s.o.TestModel == nil {
		return fmt.Errorf("this massd has no model registry: %w", api.ErrUnavailable)
	}
	res, err := s.o.TestModel(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}

// episodeFile serves one allowed file of an episode. Every path component
// is opened with O_NOFOLLOW relative to its parent, and only a regular file
// is served, so links planted in an episode directory are never followed.
func (s *Server) episodeFile(w http.ResponseWriter, r *http.Request) error {
	id, name := r.PathValue("id"), r.PathValue("name")
	if !ValidEpisodeID(id) {
		return fmt.Errorf("episode id %q is not valid: %w", id, api.ErrInvalid)
	}
	parts, ok := episodeFilePath(name)
	if !ok {
		return fmt.Errorf("episode file %q is not served; allowed: %s, manifests/<agent>.json: %w",
			name, strings.Join(EpisodeFiles, ", "), api.ErrNotFound)
	}
	f, err := OpenEpisodeFile(s.o.Layout, id, parts...)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	ctype := "application/json"
	switch {
	case strings.HasSuffix(name, ".jsonl"):
		ctype = "application/x-ndjson"
	case strings.HasSuffix(name, ".tar"):
		ctype = "application/x-tar"
	}
	w.Header().Set("Content-Type", ctype)
	http.ServeContent(w, r, "", st.ModTime().Truncate(time.Second), f)
	return nil
}

// OpenEpisodeFile opens <data-dir>/episodes/<id>/<parts...> without following
// symbolic links in id or parts, and only if the result is a regular file.
func OpenEpisodeFile(l datadir.Layout, id string, parts ...string) (*os.File, error) {
	return openNoFollow(l.Episodes(), "episode "+id, append([]string{id}, parts...)...)
}

// removeWorkspace deletes an episode's exported workspace and keeps its
// record and every other file.
func (s *Server) removeWorkspace(w http.ResponseWriter, r *http.Request) error {
	e, removed, err := s.tasks.RemoveWorkspace(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, api.WorkspaceRemoval{Episode: e, Removed: removed})
}

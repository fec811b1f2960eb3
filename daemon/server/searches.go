package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/searchfmt"
)

// maxRecordFile caps one record file read for a listing.
const maxRecordFile = 16 << 20

func (s *Server) searchRoot() string { return filepath.Join(s.o.Layout.Root, datadir.SearchDir) }

// listSearches lists every search of every task (or of ?task=), newest first.
func (s *Server) listSearches(w http.ResponseWriter, r *http.Request) error {
	tasks, err := subdirs(s.searchRoot())
	if err != nil {
		return err
	}
	if t := r.URL.Query().Get("task"); t != "" {
		tasks = []string{t}
	}
	out := []api.Search{}
	for _, t := range tasks {
		ids, err := subdirs(filepath.Join(s.searchRoot(), t))
		if err != nil {
			return err
		}
		for _, id := range ids {
			sr := api.Search{Task: t, ID: id, Dir: filepath.Join(s.searchRoot(), t, id)}
			if st, err := os.Lstat(filepath.Join(s.searchRoot(), t, id)); err == nil {
				sr.Modified = st.ModTime().UTC()
			}
			sr.Retained, _ = s.searchJSON(t, id, searchfmt.RetainedFile)
			out = append(out, sr)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Modified.After(out[j].Modified) })
	return writeJSON(w, http.StatusOK, out)
}

// getSearch returns one search's retained champion, versions and records.
func (s *Server) getSearch(w http.ResponseWriter, r *http.Request) error {
	t, id := r.PathValue("task"), r.PathValue("id")
	if !datadir.ValidID(t) || !datadir.ValidID(id) {
		return fmt.Errorf("search %s/%s: task and search ids follow the data dir's id rule: %w", t, id, api.ErrInvalid)
	}
	dir := filepath.Join(s.searchRoot(), t, id)
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("search %s of task %s: %w", id, t, api.ErrNotFound)
	}
	sr := api.Search{Task: t, ID: id, Dir: dir, Modified: st.ModTime().UTC()}
	sr.Retained, _ = s.searchJSON(t, id, searchfmt.RetainedFile)
	if sr.Comparisons, err = s.searchLines(t, id, searchfmt.ComparisonHistoryFile); err != nil {
		return err
	}
	if sr.Champions, err = s.searchLines(t, id, searchfmt.ChampionHistoryFile); err != nil {
		return err
	}
	ents, _ := os.ReadDir(filepath.Join(dir, searchfmt.VersionsDir))
	for _, e := range ents {
		if k, ok := searchfmt.ParseVersionFile(e.Name()); ok && e.Type().IsRegular() {
			sr.Versions = append(sr.Versions, k)
		}
	}
	sort.Ints(sr.Versions)
	return writeJSON(w, http.StatusOK, sr)
}

// searchFile serves one regular file of a search directory.
func (s *Server) searchFile(w http.ResponseWriter, r *http.Request) error {
	t, id := r.PathValue("task"), r.PathValue("id")
	if !datadir.ValidID(t) || !datadir.ValidID(id) {
		return fmt.Errorf("search %s/%s: task and search ids follow the data dir's id rule: %w", t, id, api.ErrInvalid)
	}
	return serveDataFile(w, r, s.searchRoot(), "search "+t+"/"+id, append([]string{t, id}, strings.Split(r.PathValue("name"), "/")...))
}

// serveDataFile serves root/<comps...> when every component follows the
// data dir's id rule, opened without following links.
func serveDataFile(w http.ResponseWriter, r *http.Request, root, what string, comps []string) error {
	for _, c := range comps {
		if !datadir.ValidID(c) {
			return fmt.Errorf("%s: %q is not a file name the API serves: %w", what, c, api.ErrInvalid)
		}
	}
	f, err := openNoFollow(root, what, comps...)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	ctype := "text/plain; charset=utf-8"
	switch {
	case strings.HasSuffix(st.Name(), ".json"):
		ctype = "application/json"
	case strings.HasSuffix(st.Name(), ".jsonl"):
		ctype = "application/x-ndjson"
	}
	w.Header().Set("Content-Type", ctype)
	http.ServeContent(w, r, "", st.ModTime().Truncate(time.Second), f)
	return nil
}

func (s *Server) searchJSON(t, id, name string) (json.RawMessage, error) {
	b, err := readCapped(s.searchRoot(), "search "+id, append([]string{t, id}, strings.Split(name, "/")...))
	if err != nil || !json.Valid(b) {
		return nil, errors.Join(err, fmt.Errorf("%s is not JSON", name))
	}
	return b, nil
}

// searchLines reads a JSONL record file; a missing file is no lines, a
// line that is not JSON is skipped (a search rewrites the file whole).
func (s *Server) searchLines(t, id, name string) ([]json.RawMessage, error) {
	b, err := readCapped(s.searchRoot(), "search "+id, append([]string{t, id}, strings.Split(name, "/")...))
	if errors.Is(err, api.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxRecordFile)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); json.Valid(line) {
			out = append(out, append(json.RawMessage(nil), line...))
		}
	}
	return out, sc.Err()
}

// readCapped reads a regular file below root without following links.
func readCapped(root, what string, comps []string) ([]byte, error) {
	f, err := openNoFollow(root, what, comps...)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecordFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > maxRecordFile {
		return nil, fmt.Errorf("%s: %s is larger than %d bytes", what, comps[len(comps)-1], maxRecordFile)
	}
	return b, nil
}

// subdirs lists the directories (not links) of dir whose names follow the
// id rule; a missing dir has none.
func subdirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && datadir.ValidID(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/generationfmt"
)

// listGenerations returns every generation's summary, by number.
func (s *Server) listGenerations(w http.ResponseWriter, _ *http.Request) error {
	ents, err := os.ReadDir(filepath.Join(s.o.Layout.Root, datadir.GenerationsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("list generations: %w", err)
	}
	var gs []int
	for _, e := range ents {
		if g, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && g > 0 {
			gs = append(gs, g)
		}
	}
	sort.Ints(gs)
	out := []json.RawMessage{}
	for _, g := range gs {
		b, err := s.readGeneration(g)
		if errors.Is(err, api.ErrNotFound) {
			continue // made, no summary yet
		}
		if err != nil {
			return err
		}
		out = append(out, b)
	}
	return writeJSON(w, http.StatusOK, out)
}

func (s *Server) getGeneration(w http.ResponseWriter, r *http.Request) error {
	g, err := strconv.Atoi(r.PathValue("g"))
	if err != nil || g < 1 || strconv.Itoa(g) != r.PathValue("g") {
		return fmt.Errorf("generation %q: a generation is a number from 1: %w", r.PathValue("g"), api.ErrInvalid)
	}
	b, err := s.readGeneration(g)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, b)
}

func (s *Server) readGeneration(g int) (json.RawMessage, error) {
	p := filepath.Join(s.o.Layout.Generation(strconv.Itoa(g)), generationfmt.SummaryFile)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("generation %d: %w", g, api.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", g, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > generationfmt.MaxFileBytes {
		return nil, fmt.Errorf("generation %d: %s is not a regular file under %d bytes", g, generationfmt.SummaryFile, generationfmt.MaxFileBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", g, err)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("generation %d: %s is not valid JSON", g, generationfmt.SummaryFile)
	}
	return b, nil
}

// generationFile serves one regular file of a generation directory (the
// training metrics, a task's ranking or matches), opened without following
// links.
func (s *Server) generationFile(w http.ResponseWriter, r *http.Request) error {
	g, err := strconv.Atoi(r.PathValue("g"))
	if err != nil || g < 1 || strconv.Itoa(g) != r.PathValue("g") {
		return fmt.Errorf("generation %q: a generation is a number from 1: %w", r.PathValue("g"), api.ErrInvalid)
	}
	root := filepath.Join(s.o.Layout.Root, datadir.GenerationsDir)
	return serveDataFile(w, r, root, "generation "+r.PathValue("g"), append([]string{r.PathValue("g")}, strings.Split(r.PathValue("name"), "/")...))
}

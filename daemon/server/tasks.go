package server

import (
	"fmt"
	"io"
	"net/http"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.tasks.List(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ts)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tasks.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// validateTask checks a spec document (the request body) without storing it.
func (s *Server) validateTask(w http.ResponseWriter, r *http.Request) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, taskspec.MaxSpecBytes+1))
	if err != nil {
		return fmt.Errorf("read spec: %v: %w", err, api.ErrInvalid)
	}
	res := api.ValidateResult{OK: true}
	if _, err := taskspec.Parse(data); err != nil {
		res.OK, res.Errors = false, taskspec.Messages(err)
	}
	return writeJSON(w, http.StatusOK, res)
}

// addTask receives a tar stream holding spec.yaml and the files it names
// and hands it to the catalog, which unpacks it into a fresh directory,
// validates it, moves it to <data-dir>/tasks/<id> and records it; a failure
// at any step leaves neither the folder nor the row behind.
func (s *Server) addTask(w http.ResponseWriter, r *http.Request) error {
	if s.o.Jobs != nil {
		if err := s.o.Jobs.CheckDisk(); err != nil {
			return err
		}
	}
	t, err := s.tasks.Add(r.Context(), func(dir string) error {
		return untar(http.MaxBytesReader(w, r.Body, MaxTaskUploadBytes), dir, uploadLimits)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

// removeTask deletes a stored task (?force=1 even when finished jobs
// reference it).
func (s *Server) removeTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.tasks.RemoveTask(r.Context(), r.PathValue("id"), r.URL.Query().Get("force") == "1")
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

// updateTask replaces a stored task with an upload of the same id (the tar
// stream of POST /v1/tasks).
func (s *Server) updateTask(w http.ResponseWriter, r *http.Request) error {
	if s.o.Jobs != nil {
		if err := s.o.Jobs.CheckDisk(); err != nil {
			return err
		}
	}
	t, err := s.tasks.Update(r.Context(), r.PathValue("id"), func(dir string) error {
		return untar(http.MaxBytesReader(w, r.Body, MaxTaskUploadBytes), dir, uploadLimits)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, t)
}

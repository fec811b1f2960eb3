package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/taskspec"
)

func (s *Server) listTasks(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.o.Store.Tasks(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ts)
}

func (s *Server) getTask(w http.ResponseWriter, r *http.Request) error {
	t, err := s.o.Store.Task(r.Context(), r.PathValue("id"))
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

// addTask receives a tar stream holding spec.yaml and the files it names,
// unpacks it into a fresh directory, validates it, moves it to
// <data-dir>/tasks/<id>, and only then records the task. A failure at any
// step leaves neither the folder nor the row behind.
func (s *Server) addTask(w http.ResponseWriter, r *http.Request) error {
	if s.o.Jobs != nil {
		if err := s.o.Jobs.CheckDisk(); err != nil {
			return err
		}
	}
	tasksDir := s.o.Layout.Tasks()
	if err := os.MkdirAll(tasksDir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", tasksDir, err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(tasksDir, ".incoming-"+hex.EncodeToString(rnd[:]))
	if err := os.Mkdir(tmp, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	if err := untar(http.MaxBytesReader(w, r.Body, MaxTaskUploadBytes), tmp, uploadLimits); err != nil {
		return err
	}
	spec, err := taskspec.Load(filepath.Join(tmp, taskspec.FileName))
	if err != nil {
		return fmt.Errorf("%s: %w", strings.ReplaceAll(err.Error(), tmp+"/", ""), api.ErrInvalid)
	}
	dir := s.o.Layout.Task(spec.ID)
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("task %s already exists: %w", spec.ID, api.ErrConflict)
	}
	// The folder goes into place first: a row is never written for a
	// folder that is not there.
	if err := os.Rename(tmp, dir); err != nil {
		if errors.Is(err, fs.ErrExist) { // another upload of this id won the race
			return fmt.Errorf("task %s already exists: %w", spec.ID, api.ErrConflict)
		}
		return fmt.Errorf("store task %s: %w", spec.ID, err)
	}
	keep = true
	t := api.Task{ID: spec.ID, Created: time.Now().UTC(), Dir: dir, Spec: *spec}
	if err := s.o.Store.CreateTask(r.Context(), t); err != nil {
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			s.log.Error("remove task folder after a failed insert", "task", spec.ID, "dir", dir, "err", rmErr)
		}
		return err
	}
	s.log.Info("task added", "task", spec.ID, "dir", dir)
	return writeJSON(w, http.StatusCreated, t)
}

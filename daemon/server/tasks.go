package server

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/taskspec"
)

// Upload limits for POST /v1/tasks.
const (
	MaxTaskUploadBytes = 4 << 30
	MaxTaskFiles       = 100_000
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
	t, err := s.tasks.Add(r.Context(), func(dir string) error {
		return untar(http.MaxBytesReader(w, r.Body, MaxTaskUploadBytes), dir)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, t)
}

// untar extracts regular files and directories only, below dst, refusing
// absolute names, "..", links and devices.
func untar(r io.Reader, dst string) error {
	tr := tar.NewReader(r)
	n := 0
	sawSpec := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read task upload: %v: %w", err, api.ErrInvalid)
		}
		n++
		if n > MaxTaskFiles {
			return fmt.Errorf("task upload has more than %d entries: %w", MaxTaskFiles, api.ErrInvalid)
		}
		name := strings.TrimSuffix(h.Name, "/")
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || strings.ContainsRune(name, 0) {
			return fmt.Errorf("task upload entry %q is not a clean relative path: %w", h.Name, api.ErrInvalid)
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o750); err != nil {
				return fmt.Errorf("unpack %s: %w", name, err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
				return fmt.Errorf("unpack %s: %w", name, err)
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
			if err != nil {
				return fmt.Errorf("unpack %s: %v: %w", name, err, api.ErrInvalid)
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return fmt.Errorf("unpack %s: %v: %w", name, err, api.ErrInvalid)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("unpack %s: %w", name, err)
			}
			sawSpec = sawSpec || name == taskspec.FileName
		default:
			return fmt.Errorf("task upload entry %q is not a regular file or directory: %w", h.Name, api.ErrInvalid)
		}
	}
	if !sawSpec {
		return fmt.Errorf("task upload has no %s: %w", taskspec.FileName, api.ErrInvalid)
	}
	return nil
}

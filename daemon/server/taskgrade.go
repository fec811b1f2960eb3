package server

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// Entry prefixes of a POST /v1/tasks/grade upload: the task as `task add`
// sends it, and the folder to grade.
const (
	GradeTaskPrefix      = "task/"
	GradeWorkspacePrefix = "workspace/"
)

// gradeTask runs a task's grader on an uploaded folder: the body is a tar
// of workspace/… (the folder) and either task/… (a task not stored: its
// spec and files, as task add uploads them) or ?task=ID (a stored task).
// The grade runs in the box an episode's grade gets (Options.GradeTask).
func (s *Server) gradeTask(w http.ResponseWriter, r *http.Request) error {
	if s.o.GradeTask == nil {
		return fmt.Errorf("this massd has no sandbox runtime to grade in: %w", api.ErrUnavailable)
	}
	tmp, err := os.MkdirTemp(s.o.Layout.Root, ".taskgrade-")
	if err != nil {
		return fmt.Errorf("staging folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	id := r.URL.Query().Get("task")
	lim := untarLimits{Entries: uploadLimits.Entries, Bytes: uploadLimits.Bytes}
	if id == "" {
		lim.Spec = GradeTaskPrefix + taskspec.FileName
	}
	if err := untar(http.MaxBytesReader(w, r.Body, MaxTaskUploadBytes), tmp, lim); err != nil {
		return err
	}
	dir := filepath.Join(tmp, strings.TrimSuffix(GradeTaskPrefix, "/"))
	if id != "" {
		t, err := s.tasks.Get(r.Context(), id)
		if err != nil {
			return err
		}
		dir = t.Dir
	}
	spec, err := taskspec.Load(filepath.Join(dir, taskspec.FileName))
	if err != nil {
		return fmt.Errorf("%s: %w", strings.ReplaceAll(err.Error(), tmp+"/", ""), api.ErrInvalid)
	}
	if spec.Grader == nil {
		return fmt.Errorf("task %s declares no grader (add grader: {command: …} to its spec): %w", spec.ID, api.ErrInvalid)
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(tarFolder(pw, filepath.Join(tmp, strings.TrimSuffix(GradeWorkspacePrefix, "/"))))
	}()
	g, err := s.o.GradeTask(r.Context(), spec, pr)
	pr.Close()
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, g)
}

// tarFolder writes dir's regular files and directories as a tar of
// dir-relative names (an episode's workspace export); a missing dir is an
// empty folder. The files were just unpacked by untar: no links.
func tarFolder(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && p == dir {
			return filepath.SkipDir
		}
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, ModTime: fi.ModTime(), Typeflag: tar.TypeReg, Size: fi.Size()}
		switch {
		case d.IsDir():
			h.Name, h.Mode, h.Typeflag, h.Size = h.Name+"/", 0o755, tar.TypeDir, 0
		case !fi.Mode().IsRegular():
			return nil
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, fi.Size())
		return err
	})
	if err != nil {
		return fmt.Errorf("pack the folder to grade: %w", err)
	}
	return tw.Close()
}

package client

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/taskspec"
)

// Entry prefixes of a grade upload (server.GradeTaskPrefix and
// server.GradeWorkspacePrefix).
const (
	gradeTaskPrefix      = "task/"
	gradeWorkspacePrefix = "workspace/"
)

// GradeTask runs a task's grader on folder dir through massd, in the box
// an episode's grade gets. task is a spec file (uploaded with its files
// for this grade only, never stored) or the id of a stored task. dir's
// regular files are sent; links and other special files are skipped, as
// a workspace export has none.
func (c *Client) GradeTask(ctx context.Context, task, dir string) (grade.Grade, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return grade.Grade{}, fmt.Errorf("%s is not a folder to grade: %w", dir, errclass.ErrInvalid)
	}
	var specPath string
	var files []string
	p := "/v1/tasks/grade"
	if fi, err := os.Stat(task); err == nil && !fi.IsDir() {
		spec, err := taskspec.Load(task)
		if err != nil {
			return grade.Grade{}, err
		}
		if files, err = spec.Files(); err != nil {
			return grade.Grade{}, err
		}
		specPath = task
		task = spec.Dir
	} else {
		p += "?task=" + url.QueryEscape(task)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeGradeTar(pw, specPath, task, files, dir)) }()
	req, err := c.newRequest(ctx, http.MethodPost, p, nil, pr, "application/x-tar")
	if err != nil {
		pr.Close()
		return grade.Grade{}, err
	}
	var g grade.Grade
	err = c.decode(req, &g)
	pr.Close()
	return g, err
}

// writeGradeTar writes the task (when specPath is set) under task/ and
// dir's regular files under workspace/.
func writeGradeTar(w io.Writer, specPath, taskDir string, files []string, dir string) error {
	tw := tar.NewWriter(w)
	if specPath != "" {
		if err := addTask(tw, gradeTaskPrefix, specPath, taskDir, files); err != nil {
			return err
		}
	}
	root, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return addFile(tw, root, gradeWorkspacePrefix, filepath.ToSlash(rel))
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

package client

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// AddTask loads and validates the spec at specPath locally, then uploads it
// with every input and workflow file, and the folder's scripted-recipe.json
// when it has one, as a tar stream.
func (c *Client) AddTask(ctx context.Context, specPath string) (api.Task, error) {
	return c.uploadTask(ctx, http.MethodPost, "", specPath)
}

// UpdateTask replaces stored task id with the spec at specPath (which must
// keep the id) and its files; refused with api.ErrConflict while jobs of
// the task are queued or running.
func (c *Client) UpdateTask(ctx context.Context, id, specPath string) (api.Task, error) {
	return c.uploadTask(ctx, http.MethodPut, id, specPath)
}

// RemoveTask deletes a stored task; with force even when finished jobs
// reference it (api.ErrConflict otherwise).
func (c *Client) RemoveTask(ctx context.Context, id string, force bool) (api.Task, error) {
	var t api.Task
	p := "/v1/tasks/" + url.PathEscape(id)
	if force {
		p += "?force=1"
	}
	err := c.sendJSON(ctx, http.MethodDelete, p, nil, &t)
	return t, err
}

func (c *Client) uploadTask(ctx context.Context, method, id, specPath string) (api.Task, error) {
	spec, err := taskspec.Load(specPath)
	if err != nil {
		return api.Task{}, err
	}
	if id != "" && spec.ID != id {
		return api.Task{}, fmt.Errorf("%s has id %q, not %q: an update keeps the task's id", specPath, spec.ID, id)
	}
	files, err := spec.Files()
	if err != nil {
		return api.Task{}, err
	}
	for _, f := range files {
		if f == taskspec.FileName {
			return api.Task{}, fmt.Errorf("task %s: an input is named %s, which is reserved for the spec; rename it", spec.ID, taskspec.FileName)
		}
	}
	files, err = withRecipe(spec, files)
	if err != nil {
		return api.Task{}, err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTaskTar(pw, specPath, spec.Dir, files)) }()
	p := "/v1/tasks"
	if id != "" {
		p += "/" + url.PathEscape(id)
	}
	req, err := c.newRequest(ctx, method, p, nil, pr, "application/x-tar")
	if err != nil {
		pr.Close()
		return api.Task{}, err
	}
	var t api.Task
	err = c.decode(req, &t)
	pr.Close()
	return t, err
}

func writeTaskTar(w io.Writer, specPath, dir string, files []string) error {
	tw := tar.NewWriter(w)
	if err := addTask(tw, "", specPath, dir, files); err != nil {
		return err
	}
	return tw.Close()
}

// addTask appends the spec and the task's files to tw, every name after
// prefix.
func addTask(tw *tar.Writer, prefix, specPath, dir string, files []string) error {
	spec, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: prefix + taskspec.FileName, Mode: 0o644, Size: int64(len(spec)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(spec); err != nil {
		return err
	}
	root, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range files {
		if err := addFile(tw, root, prefix, rel); err != nil {
			return err
		}
	}
	return nil
}

// addFile opens name below root refusing any symbolic link on the way
// (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), so a link swapped in after
// the spec was validated cannot send a host file, and appends it to tw.
func addFile(tw *tar.Writer, root *os.File, prefix, name string) error {
	path := filepath.Join(root.Name(), filepath.FromSlash(name))
	fd, err := unix.Openat2(int(root.Fd()), filepath.FromSlash(name), &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return fmt.Errorf("open %s (no symbolic links allowed on the path): %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if err := tw.WriteHeader(&tar.Header{Name: prefix + name, Mode: 0o644, Size: st.Size(), Typeflag: tar.TypeReg, ModTime: st.ModTime()}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, st.Size()); err != nil {
		return fmt.Errorf("upload %s: %w", path, err)
	}
	return nil
}

// ValidateTask asks massd to check a spec document (no file checks).
func (c *Client) ValidateTask(ctx context.Context, spec []byte) (api.ValidateResult, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/v1/tasks/validate", nil, bytes.NewReader(spec), "application/yaml")
	if err != nil {
		return api.ValidateResult{}, err
	}
	var res api.ValidateResult
	err = c.decode(req, &res)
	return res, err
}

// Tasks lists the stored tasks.
func (c *Client) Tasks(ctx context.Context) ([]api.Task, error) {
	var ts []api.Task
	err := c.getJSON(ctx, "/v1/tasks", nil, &ts)
	return ts, err
}

// Task returns one stored task.
func (c *Client) Task(ctx context.Context, id string) (api.Task, error) {
	var t api.Task
	err := c.getJSON(ctx, "/v1/tasks/"+url.PathEscape(id), nil, &t)
	return t, err
}

// withRecipe adds the task folder's scripted-recipe.json, when there is
// one, to the files uploaded: massd keeps it beside the spec for the
// scripted dry-run model. It holds the answers, so no input may carry it.
func withRecipe(spec *taskspec.Spec, files []string) ([]string, error) {
	if _, err := os.Lstat(filepath.Join(spec.Dir, taskspec.RecipeFile)); err != nil {
		return files, nil
	}
	for _, in := range spec.Inputs {
		if p := path.Clean(in.Path); p == taskspec.RecipeFile || p == "." {
			return nil, fmt.Errorf("task %s: input %q would put %s, which holds the scripted answers, into the workspace; keep it beside the spec only", spec.ID, in.Path, taskspec.RecipeFile)
		}
	}
	if slices.Contains(files, taskspec.RecipeFile) {
		return files, nil // a hidden path: uploaded already
	}
	return append(files, taskspec.RecipeFile), nil
}

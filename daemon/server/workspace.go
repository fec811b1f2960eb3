package server

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/episodefmt"
)

// MaxWorkspaceEntries bounds the tar entries a workspace file read scans.
const MaxWorkspaceEntries = 100_000

// workspaceFile serves one regular file of an episode's exported workspace
// (workspace.tar), found by its workspace-relative path. The tar is opened
// without following links and read as data: nothing is unpacked and no
// path inside the workspace is ever opened on the host. Links and other
// entry kinds are refused, never resolved.
func (s *Server) workspaceFile(w http.ResponseWriter, r *http.Request) error {
	id, name := r.PathValue("id"), r.PathValue("path")
	if !ValidEpisodeID(id) {
		return fmt.Errorf("episode id %q is not valid: %w", id, api.ErrInvalid)
	}
	clean := path.Clean(strings.TrimPrefix(name, "/"))
	if name == "" || clean != name || clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
		return fmt.Errorf("workspace path %q must be clean and relative (as workspace.manifest.json lists it): %w", name, api.ErrInvalid)
	}
	f, err := OpenEpisodeFile(s.o.Layout, id, episodefmt.ExportFile)
	if err != nil {
		return fmt.Errorf("%w (the workspace export was removed or never written)", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for n := 0; n < MaxWorkspaceEntries; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("episode %s: read %s: %w", id, episodefmt.ExportFile, err)
		}
		if strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/") != clean {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return fmt.Errorf("episode %s: %s is not a regular file in the workspace (type %q; links are never followed): %w", id, clean, h.Typeflag, api.ErrNotFound)
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(h.Size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			io.Copy(w, io.LimitReader(tr, h.Size))
		}
		return nil
	}
	return fmt.Errorf("episode %s: no file %s in the workspace export: %w", id, clean, api.ErrNotFound)
}

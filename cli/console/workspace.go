package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strings"

	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/sandbox"
)

// MaxManifestBytes caps the workspace manifest a tree page reads.
const MaxManifestBytes = 32 << 20

// MaxTreeEntries caps the entries a tree page lists.
const MaxTreeEntries = 5000

// TreeEntry is one row of a workspace tree: a manifest entry with its depth.
type TreeEntry struct {
	sandbox.FileInfo
	Name  string // the last path component
	Depth int
}

// readManifest reads an episode's workspace.manifest.json through massd.
func (c *Console) readManifest(ctx context.Context, id string) ([]sandbox.FileInfo, error) {
	rc, err := c.cl.EpisodeFile(ctx, id, episodefmt.ExportManFile)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", episodefmt.ExportManFile, err)
	}
	if len(b) > MaxManifestBytes {
		return nil, fmt.Errorf("%s of %s is larger than %d bytes", episodefmt.ExportManFile, id, MaxManifestBytes)
	}
	var m []sandbox.FileInfo
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s of %s: %w", episodefmt.ExportManFile, id, err)
	}
	return m, nil
}

// Tree orders manifest entries as a tree: by path components, each
// directory before what it holds.
func Tree(m []sandbox.FileInfo) []TreeEntry {
	out := make([]TreeEntry, 0, len(m))
	for _, f := range m {
		out = append(out, TreeEntry{FileInfo: f, Name: path.Base(f.Path), Depth: strings.Count(f.Path, "/")})
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.ReplaceAll(out[i].Path, "/", "\x00") < strings.ReplaceAll(out[j].Path, "/", "\x00")
	})
	return out
}

func (c *Console) workspaceTree(ctx context.Context, r *http.Request) (view, error) {
	id := r.PathValue("id")
	m, err := c.readManifest(ctx, id)
	if err != nil {
		return view{}, err
	}
	t := Tree(m)
	more := 0
	if len(t) > MaxTreeEntries {
		more, t = len(t)-MaxTreeEntries, t[:MaxTreeEntries]
	}
	var total int64
	for _, f := range m {
		total += f.Size
	}
	return view{name: "workspace", title: "workspace of " + id,
		data: map[string]any{"ID": id, "Tree": t, "More": more, "Files": len(m), "Bytes": total}}, nil
}

// workspaceFile shows one file of the exported workspace, read by massd out
// of workspace.tar: text capped at MaxFileView, binary named as such.
func (c *Console) workspaceFile(ctx context.Context, r *http.Request) (view, error) {
	id, name := r.PathValue("id"), r.PathValue("path")
	rc, err := c.cl.WorkspaceFile(ctx, id, name)
	if err != nil {
		return view{}, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxFileView+1))
	if err != nil {
		return view{}, fmt.Errorf("read %s: %w", name, err)
	}
	truncated := len(b) > MaxFileView
	if truncated {
		b = b[:MaxFileView]
	}
	binary := IsBinary(b)
	text := ""
	if !binary {
		text, truncated = capText(b, truncated)
	}
	return view{name: "file", title: name + " in the workspace of " + id,
		data: map[string]any{"ID": id, "Name": name, "Text": text, "Binary": binary, "Truncated": truncated, "Cap": MaxFileView}}, nil
}

// IsBinary reports whether b looks like binary data: a NUL byte in its
// first 8 KiB (git's rule).
func IsBinary(b []byte) bool {
	return strings.IndexByte(string(b[:min(len(b), 8000)]), 0) >= 0
}

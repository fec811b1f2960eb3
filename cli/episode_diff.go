package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/sandbox"
)

// Caps of episode diff.
const (
	maxDiffManifest = 32 << 20 // bytes of one workspace.manifest.json
	maxDiffFile     = 1 << 20  // a changed file larger than this is not diffed
	diffContext     = 3        // lines of context around each change
)

// fileChange is one path whose entry differs between two workspaces.
type fileChange struct {
	Path string            `json:"path"`
	A    *sandbox.FileInfo `json:"a,omitempty"`
	B    *sandbox.FileInfo `json:"b,omitempty"`
	Diff string            `json:"diff,omitempty"` // unified diff of text files
	Note string            `json:"note,omitempty"` // why no diff is shown
}

// workspaceDiff is what episode diff prints.
type workspaceDiff struct {
	A, B      string
	Added     []fileChange `json:"added"`
	Removed   []fileChange `json:"removed"`
	Changed   []fileChange `json:"changed"`
	Unchanged int          `json:"unchanged"`
}

// diffManifests compares two workspace manifests by path: an entry is
// changed when its type, mode or content hash differs.
func diffManifests(a, b []sandbox.FileInfo) workspaceDiff {
	am, bm := map[string]*sandbox.FileInfo{}, map[string]*sandbox.FileInfo{}
	for i := range a {
		am[a[i].Path] = &a[i]
	}
	for i := range b {
		bm[b[i].Path] = &b[i]
	}
	var d workspaceDiff
	for p, fa := range am {
		fb, ok := bm[p]
		switch {
		case !ok:
			d.Removed = append(d.Removed, fileChange{Path: p, A: fa})
		case fa.Type != fb.Type || fa.Mode != fb.Mode || fa.SHA256 != fb.SHA256 || fa.Size != fb.Size:
			d.Changed = append(d.Changed, fileChange{Path: p, A: fa, B: fb})
		default:
			d.Unchanged++
		}
	}
	for p, fb := range bm {
		if _, ok := am[p]; !ok {
			d.Added = append(d.Added, fileChange{Path: p, B: fb})
		}
	}
	for _, l := range [][]fileChange{d.Added, d.Removed, d.Changed} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	return d
}

func episodeDiff(c *cli.Context) error {
	args, err := positional(c)
	if err != nil {
		return err
	}
	if len(args) != 2 {
		return cli.Exit(fmt.Sprintf("usage: massctl %s A B (two episode ids; got %d arguments)", c.Command.FullName(), len(args)), 2)
	}
	cl := clientFrom(c)
	ma, err := workspaceManifest(c.Context, cl, args[0])
	if err != nil {
		return err
	}
	mb, err := workspaceManifest(c.Context, cl, args[1])
	if err != nil {
		return err
	}
	d := diffManifests(ma, mb)
	d.A, d.B = args[0], args[1]
	if !c.Bool("stat") {
		for i := range d.Changed {
			textDiff(c.Context, cl, d.A, d.B, &d.Changed[i])
		}
	}
	if c.Bool("json") {
		return printJSON(c, d)
	}
	printWorkspaceDiff(c.App.Writer, d)
	return nil
}

func workspaceManifest(ctx context.Context, cl *client.Client, id string) ([]sandbox.FileInfo, error) {
	rc, err := cl.EpisodeFile(ctx, id, episodefmt.ExportManFile)
	if err != nil {
		return nil, fmt.Errorf("episode %s: %w", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxDiffManifest+1))
	if err != nil {
		return nil, fmt.Errorf("episode %s: read %s: %w", id, episodefmt.ExportManFile, err)
	}
	if len(b) > maxDiffManifest {
		return nil, fmt.Errorf("episode %s: %s is larger than %d bytes", id, episodefmt.ExportManFile, maxDiffManifest)
	}
	var m []sandbox.FileInfo
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("episode %s: %s: %w", id, episodefmt.ExportManFile, err)
	}
	return m, nil
}

// textDiff fills fc.Diff for two regular text files, or fc.Note saying why not.
func textDiff(ctx context.Context, cl *client.Client, a, b string, fc *fileChange) {
	switch {
	case fc.A.Type != "file" || fc.B.Type != "file":
		fc.Note = fmt.Sprintf("%s -> %s", fc.A.Type, fc.B.Type)
		return
	case fc.A.SHA256 == fc.B.SHA256:
		fc.Note = fmt.Sprintf("mode %04o -> %04o", fc.A.Mode, fc.B.Mode)
		return
	case fc.A.Size > maxDiffFile || fc.B.Size > maxDiffFile:
		fc.Note = fmt.Sprintf("larger than %d bytes: %d -> %d bytes", maxDiffFile, fc.A.Size, fc.B.Size)
		return
	}
	ta, err := workspaceText(ctx, cl, a, fc.Path)
	if err == nil {
		var tb string
		if tb, err = workspaceText(ctx, cl, b, fc.Path); err == nil {
			fc.Diff = trimContext(search.Unified(a+"/"+fc.Path, b+"/"+fc.Path, ta, tb), diffContext)
			return
		}
	}
	fc.Note = err.Error()
}

func workspaceText(ctx context.Context, cl *client.Client, id, p string) (string, error) {
	rc, err := cl.WorkspaceFile(ctx, id, p)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxDiffFile+1))
	if err != nil {
		return "", err
	}
	if strings.IndexByte(string(b[:min(len(b), 8000)]), 0) >= 0 {
		return "", fmt.Errorf("binary file")
	}
	return string(b), nil
}

// trimContext keeps the header lines of a whole-file unified diff and, of
// its body, the changed lines with n lines of context around them; a run of
// dropped lines becomes one "@@ … @@" separator.
func trimContext(u string, n int) string {
	lines := strings.Split(strings.TrimSuffix(u, "\n"), "\n")
	var head, body []string
	for i, l := range lines {
		if strings.HasPrefix(l, "@@") {
			head, body = lines[:i+1], lines[i+1:]
			break
		}
	}
	if head == nil {
		return u
	}
	keep := make([]bool, len(body))
	for i, l := range body {
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
			for j := max(0, i-n); j <= min(len(body)-1, i+n); j++ {
				keep[j] = true
			}
		}
	}
	out := append([]string(nil), head...)
	skipped := false
	for i, l := range body {
		if !keep[i] {
			skipped = true
			continue
		}
		if skipped {
			out = append(out, "@@ … @@")
			skipped = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

func printWorkspaceDiff(w io.Writer, d workspaceDiff) {
	fmt.Fprintf(w, "workspace of %s -> %s: %d added, %d removed, %d changed, %d unchanged\n",
		d.A, d.B, len(d.Added), len(d.Removed), len(d.Changed), d.Unchanged)
	for _, f := range d.Added {
		fmt.Fprintf(w, "A %s (%s, %d bytes)\n", safeLine(f.Path), f.B.Type, f.B.Size)
	}
	for _, f := range d.Removed {
		fmt.Fprintf(w, "D %s (%s, %d bytes)\n", safeLine(f.Path), f.A.Type, f.A.Size)
	}
	for _, f := range d.Changed {
		fmt.Fprintf(w, "M %s (%d -> %d bytes)%s\n", safeLine(f.Path), f.A.Size, f.B.Size, noteOf(f.Note))
	}
	for _, f := range d.Changed {
		if f.Diff != "" {
			fmt.Fprintf(w, "\n%s", safeText(f.Diff))
		}
	}
}

func noteOf(n string) string {
	if n == "" {
		return ""
	}
	return ": " + safeLine(n)
}

// safeText makes model-written text safe for a terminal: control
// characters but newline and tab become visible symbols (ESC shows as ␛).
func safeText(s string) string { return console.Visible(s) }

// safeLine is safeText on one line: newlines show as ␤.
func safeLine(s string) string { return strings.ReplaceAll(console.Visible(s), "\n", "\u2424") }

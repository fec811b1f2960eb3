package standin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// IndexName is the host the stand-in's package index answers as.
const IndexName = "pypi.standin.example"

// maxIndexFile bounds one distribution the index serves.
const maxIndexFile = 64 << 20

var normRE = regexp.MustCompile(`[-_.]+`)

// NormalizeProject is a project name as PEP 503 compares them.
func NormalizeProject(name string) string {
	return strings.ToLower(normRE.ReplaceAllString(name, "-"))
}

// dist is one file of the index.
type dist struct {
	name   string // file name
	sha256 string
	data   []byte
}

// Index is a PEP 503 "simple" package index over the wheels of a folder,
// read once: /simple/ lists the projects, /simple/<project>/ its files
// with #sha256= fragments, /packages/<file> serves a file. pip installs
// from it with --index-url http://<host>/simple/.
type Index struct {
	projects map[string][]dist // normalized project -> files
	files    map[string]dist
}

// NewIndex reads every *.whl in dir; a wheel's project is the part of its
// file name before the first dash.
func NewIndex(dir string) (*Index, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil {
		return nil, err
	}
	ix := &Index{projects: map[string][]dist{}, files: map[string]dist{}}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexFile {
			return nil, fmt.Errorf("index file %s: not a regular file under %d bytes (%v)", p, maxIndexFile, err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("index file: %w", err)
		}
		sum := sha256.Sum256(data)
		d := dist{name: filepath.Base(p), sha256: hex.EncodeToString(sum[:]), data: data}
		project, _, _ := strings.Cut(d.name, "-")
		key := NormalizeProject(project)
		ix.projects[key] = append(ix.projects[key], d)
		ix.files[d.name] = d
	}
	if len(ix.files) == 0 {
		return nil, fmt.Errorf("index %s: no *.whl files", dir)
	}
	return ix, nil
}

// ServeHTTP serves the index pages and files; anything else is 404.
func (ix *Index) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case p == "/simple/" || p == "/simple":
		names := make([]string, 0, len(ix.projects))
		for n := range ix.projects {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		b.WriteString("<!DOCTYPE html>\n<html><body>\n")
		for _, n := range names {
			fmt.Fprintf(&b, "<a href=\"/simple/%s/\">%s</a>\n", n, html.EscapeString(n))
		}
		b.WriteString("</body></html>\n")
		writePage(w, b.String())
	case strings.HasPrefix(p, "/simple/"):
		project := NormalizeProject(strings.Trim(strings.TrimPrefix(p, "/simple/"), "/"))
		files, ok := ix.projects[project]
		if !ok {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>Links for %s</title></head><body>\n", html.EscapeString(project))
		for _, d := range files {
			fmt.Fprintf(&b, "<a href=\"/packages/%s#sha256=%s\">%s</a>\n", d.name, d.sha256, html.EscapeString(d.name))
		}
		b.WriteString("</body></html>\n")
		writePage(w, b.String())
	case strings.HasPrefix(p, "/packages/"):
		d, ok := ix.files[strings.TrimPrefix(p, "/packages/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(d.data)
	default:
		http.NotFound(w, r)
	}
}

func writePage(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(s))
}

package judge

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// Caps of an evidence bundle (the reference's numbers).
const (
	MaxTreeFiles   = 400
	MaxTreeDepth   = 6
	ReportChars    = 28000
	JSONChars      = 24000
	CodeChars      = 12000
	MaxCodeFiles   = 4
	MaxTarEntries  = 100000 // entries read before the walk stops
	maxCandidates  = 32     // buffered excerpt candidates per kind
	excerptByteCap = 4      // bytes read per char of a cap (UTF-8)
)

// Entry is one line of the file tree.
type Entry struct {
	Path string `json:"path"`
	Type string `json:"type"` // file, dir, link, other
	Size int64  `json:"size"`
}

// Deliverable is the preflight of one required output pattern.
type Deliverable struct {
	Pattern string   `json:"pattern"`
	Found   []string `json:"found,omitempty"`
	Note    string   `json:"note,omitempty"` // e.g. "is a link (not followed)"
}

// OK reports whether a regular file matched.
func (d Deliverable) OK() bool { return len(d.Found) > 0 }

// Excerpt is the capped text of one file.
type Excerpt struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"` // report, json, code
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Bundle is the evidence of one workspace.
type Bundle struct {
	Tree      []Entry       `json:"tree"`
	Omitted   int           `json:"omitted"`   // entries beyond the tree's caps
	Truncated bool          `json:"truncated"` // the walk stopped at MaxTarEntries
	Preflight []Deliverable `json:"preflight"`
	Excerpts  []Excerpt     `json:"excerpts"`
}

// Build reads an export tar and builds its evidence bundle. Links are
// listed, never followed; file contents are read only up to the excerpt
// caps; names are cleaned and anything escaping the root is dropped.
func Build(r io.Reader, required []string) (Bundle, error) {
	var b Bundle
	c := collector{}
	tr := tar.NewReader(r)
	for n := 0; ; n++ {
		if n >= MaxTarEntries {
			b.Truncated = true
			break
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return b, fmt.Errorf("read workspace export: %w", err)
		}
		name, ok := cleanName(h.Name)
		if !ok {
			continue
		}
		e := Entry{Path: name, Type: entryType(h.Typeflag), Size: h.Size}
		if e.Type != "file" {
			e.Size = 0
		}
		c.all = append(c.all, e)
		if e.Type == "file" {
			if err := c.offer(name, h.Size, tr); err != nil {
				return b, err
			}
		}
	}
	b.Tree, b.Omitted = tree(c.all)
	b.Preflight = preflight(c.all, required)
	b.Excerpts = c.pick(required)
	return b, nil
}

func entryType(t byte) string {
	switch t {
	case tar.TypeReg:
		return "file"
	case tar.TypeDir:
		return "dir"
	case tar.TypeSymlink, tar.TypeLink:
		return "link"
	}
	return "other"
}

// cleanName makes a tar name workspace-relative; ok is false for the root
// and for names that escape it.
func cleanName(n string) (string, bool) {
	n = strings.ToValidUTF8(n, "\uFFFD")
	n = path.Clean("/" + strings.TrimPrefix(n, "./"))
	n = strings.TrimPrefix(n, "/")
	if n == "" || n == "." || len(n) > 4096 {
		return "", false
	}
	return n, true
}

func depth(p string) int { return strings.Count(p, "/") + 1 }

func tree(all []Entry) ([]Entry, int) {
	sorted := append([]Entry(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var out []Entry
	omitted := 0
	for _, e := range sorted {
		if depth(e.Path) > MaxTreeDepth || len(out) >= MaxTreeFiles {
			omitted++
			continue
		}
		out = append(out, e)
	}
	return out, omitted
}

func preflight(all []Entry, required []string) []Deliverable {
	out := make([]Deliverable, 0, len(required))
	for _, pat := range required {
		d := Deliverable{Pattern: pat}
		for _, e := range all {
			if ok, _ := path.Match(pat, e.Path); !ok {
				continue
			}
			switch e.Type {
			case "file":
				d.Found = append(d.Found, e.Path)
			case "link":
				d.Note = e.Path + " is a link (not followed)"
			}
		}
		sort.Strings(d.Found)
		if !d.OK() && d.Note == "" {
			d.Note = "missing"
		}
		out = append(out, d)
	}
	return out
}

// collector buffers the capped beginnings of candidate files.
type collector struct {
	all   []Entry
	cands map[string][]Excerpt
}

func kindOf(name string) (string, int) {
	base := strings.ToLower(path.Base(name))
	switch ext := path.Ext(base); ext {
	case ".md", ".txt", ".rst":
		return "report", ReportChars
	case ".json":
		return "json", JSONChars
	case ".py", ".go", ".js", ".ts", ".sh", ".r", ".jl", ".c", ".cc", ".cpp", ".rs", ".java", ".ipynb":
		return "code", CodeChars
	}
	return "", 0
}

func (c *collector) offer(name string, size int64, r io.Reader) error {
	kind, chars := kindOf(name)
	if kind == "" || depth(name) > MaxTreeDepth {
		return nil
	}
	if c.cands == nil {
		c.cands = map[string][]Excerpt{}
	}
	if len(c.cands[kind]) >= maxCandidates {
		return nil
	}
	buf, err := io.ReadAll(io.LimitReader(r, int64(chars*excerptByteCap)))
	if err != nil {
		return fmt.Errorf("read %s from workspace export: %w", name, err)
	}
	if bytes.IndexByte(buf, 0) >= 0 {
		return nil // binary
	}
	text, cut := capChars(buf, chars)
	c.cands[kind] = append(c.cands[kind], Excerpt{Path: name, Kind: kind, Text: text,
		Truncated: cut || size > int64(len(buf))})
	return nil
}

func capChars(b []byte, chars int) (string, bool) {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if utf8.RuneCountInString(s) <= chars {
		return s, false
	}
	n := 0
	for i := range s {
		if n == chars {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// pick chooses the excerpts: required outputs first, then by path; one
// report and one JSON budget shared by their files, up to MaxCodeFiles code files.
func (c *collector) pick(required []string) []Excerpt {
	isReq := func(p string) bool {
		for _, pat := range required {
			if ok, _ := path.Match(pat, p); ok {
				return true
			}
		}
		return false
	}
	var out []Excerpt
	for _, kind := range []string{"report", "json", "code"} {
		cs := c.cands[kind]
		sort.SliceStable(cs, func(i, j int) bool {
			ri, rj := isReq(cs[i].Path), isReq(cs[j].Path)
			if ri != rj {
				return ri
			}
			return cs[i].Path < cs[j].Path
		})
		budget := map[string]int{"report": ReportChars, "json": JSONChars}[kind]
		for i, e := range cs {
			if kind == "code" {
				if i >= MaxCodeFiles {
					break
				}
				out = append(out, e)
				continue
			}
			if budget <= 0 {
				break
			}
			if t, cut := capChars([]byte(e.Text), budget); cut {
				e.Text, e.Truncated = t, true
			}
			budget -= utf8.RuneCountInString(e.Text)
			out = append(out, e)
		}
	}
	return out
}

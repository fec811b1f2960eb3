package helper

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/mass-dev/mass/sandbox"
)

func fileType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

func infoOf(p string, fi fs.FileInfo) sandbox.FileInfo {
	return sandbox.FileInfo{Path: p, Type: fileType(fi.Mode()), Size: fi.Size(), Mode: uint32(fi.Mode().Perm())}
}

func (s *Server) stat(req Request) (sandbox.FileInfo, error) {
	p, err := s.resolve(req.Path)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return sandbox.FileInfo{}, err
	}
	info := infoOf(p, fi)
	if fi.Mode().IsRegular() {
		if info.SHA256, info.Size, err = hashFile(p); err != nil {
			return sandbox.FileInfo{}, err
		}
	}
	return info, nil
}

func (s *Server) list(req Request) ([]sandbox.FileInfo, bool, error) {
	p, err := s.resolveOr(req.Path, s.Root)
	if err != nil {
		return nil, false, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	ents, err := f.ReadDir(MaxListEntries + 1)
	if err != nil && err != io.EOF {
		return nil, false, err
	}
	truncated := len(ents) > MaxListEntries
	if truncated {
		ents = ents[:MaxListEntries]
	}
	out := make([]sandbox.FileInfo, 0, len(ents))
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // removed while listing
		}
		out = append(out, infoOf(filepath.Join(p, e.Name()), fi))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, truncated, nil
}

// short keeps error messages about very long paths readable.
func short(rel string) string {
	if len(rel) > 200 {
		return rel[:200] + "..."
	}
	return rel
}

// errStop ends a walk early once a cap is reached.
var errStop = errors.New("cap reached")

// walkFiles visits every non-directory below root without following links,
// skipping unreadable subtrees.
func walkFiles(root string, fn func(p, rel string, d fs.DirEntry) error) error {
	return walk(root, false, fn)
}

// errHidden marks a walk that met a subtree it cannot read: a strict walk
// fails rather than leave its files out.
var errHidden = errors.New("part of the workspace cannot be read")

// walk is walkFiles; strict fails on an unreadable subtree instead.
func walk(root string, strict bool, fn func(p, rel string, d fs.DirEntry) error) error {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			if strict {
				rel, _ := filepath.Rel(root, p)
				return fmt.Errorf("%s: %v: %w", short(rel), err, errHidden)
			}
			return nil // unreadable subtree: skip it
		}
		if d.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return nil
		}
		return fn(p, filepath.ToSlash(rel), d)
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// MatchGlob reports whether a slash-separated relative path matches pattern,
// where "**" matches any number of path segments and other segments follow
// path.Match.
func MatchGlob(pattern, rel string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(rel, "/"))
}

func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

func checkPattern(p string) error {
	if p == "" {
		return invalidf("missing pattern")
	}
	if len(p) > MaxPatternLen {
		return invalidf("pattern longer than %d bytes", MaxPatternLen)
	}
	if strings.Count(p, "**") > 8 {
		return invalidf("pattern has too many ** segments")
	}
	return nil
}

func (s *Server) glob(req Request) ([]string, bool, error) {
	if err := checkPattern(req.Pattern); err != nil {
		return nil, false, err
	}
	if _, err := path.Match(strings.ReplaceAll(req.Pattern, "**", "x"), ""); err != nil {
		return nil, false, invalidf("bad glob pattern %q: %v", req.Pattern, err)
	}
	root, err := s.resolveOr(req.Path, s.Root)
	if err != nil {
		return nil, false, err
	}
	var out []string
	truncated := false
	err = walkFiles(root, func(p, rel string, _ fs.DirEntry) error {
		if MatchGlob(req.Pattern, rel) {
			if len(out) == MaxGlobResults {
				truncated = true
				return errStop
			}
			out = append(out, p)
		}
		return nil
	})
	return out, truncated, err
}

func (s *Server) grep(req Request) ([]sandbox.GrepMatch, bool, error) {
	if err := checkPattern(req.Pattern); err != nil {
		return nil, false, err
	}
	re, err := regexp.Compile(req.Pattern)
	if err != nil {
		return nil, false, invalidf("bad regular expression: %v", err)
	}
	root, err := s.resolveOr(req.Path, s.Root)
	if err != nil {
		return nil, false, err
	}
	var out []sandbox.GrepMatch
	truncated := false
	visit := func(p, rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		if req.Glob != "" && !MatchGlob(req.Glob, rel) && !MatchGlob(req.Glob, path.Base(rel)) {
			return nil
		}
		return grepFile(re, p, &out, &truncated)
	}
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, false, err
	}
	if fi.Mode().IsRegular() {
		err = grepFile(re, root, &out, &truncated)
	} else {
		err = walkFiles(root, visit)
	}
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, truncated, err
}

func grepFile(re *regexp.Regexp, p string, out *[]sandbox.GrepMatch, truncated *bool) error {
	f, err := openRegular(p)
	if err != nil {
		return nil // unreadable files are skipped, as grep -s does
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, MaxGrepFileBytes))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		b := sc.Bytes()
		if n == 1 && bytes.IndexByte(b, 0) >= 0 {
			return nil // binary
		}
		if !re.Match(b) {
			continue
		}
		if len(*out) == MaxGrepMatches {
			*truncated = true
			return errStop
		}
		text := string(b)
		if len(text) > MaxGrepLineChars {
			text = text[:MaxGrepLineChars] + "…"
		}
		*out = append(*out, sandbox.GrepMatch{Path: p, Line: n, Text: text})
	}
	return nil
}

// manifest lists regular files under the root, workspace-relative, with sha256.
func (s *Server) manifest() ([]sandbox.FileInfo, bool, error) {
	var out []sandbox.FileInfo
	truncated := false
	// Strict: a file the manifest cannot see (under a mode-000 directory,
	// past PATH_MAX) fails it loudly rather than hide from the audit (F4).
	err := walk(s.Root, true, func(p, rel string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		if len(out) == MaxManifest {
			truncated = true
			return errStop
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walking
		}
		if err != nil {
			return fmt.Errorf("%s: %v: %w", short(rel), err, errHidden)
		}
		info := infoOf(rel, fi)
		if info.SHA256, info.Size, err = hashFile(p); err != nil {
			return fmt.Errorf("%s: %v: %w", short(rel), err, errHidden)
		}
		out = append(out, info)
		return nil
	})
	return out, truncated, err
}

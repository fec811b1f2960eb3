package helper

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"testing"
)

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"op":"read","path":"a.txt","offset":1,"limit":2}`,
		`{"op":"write","path":"b","content":"aGVsbG8="}`,
		`{"op":"edit","path":"a","old":"x","new":"y","replace_all":true}`,
		`{"op":"grep","pattern":"(a|b)+","glob":"**/*.py"}`,
		`{"op":"glob","pattern":"[a-"}`, `{}`, `null`, `{"op":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := DecodeRequest(bytes.NewReader(b))
		if err != nil {
			return
		}
		if req.Op == "" {
			t.Fatalf("decoded a request without op from %q", b)
		}
		if _, err := json.Marshal(req); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"ok":true,"read":{"path":"/workspace/a","content":"x","total_lines":1,"sha256":"ab"}}`,
		`{"ok":false,"kind":"denied","error":"permission denied"}`,
		`{"ok":true,"entries":[{"path":"a","type":"file","size":1}],"truncated":true}`,
		`{"ok":false}`, `garbage`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		resp, err := DecodeResponse(bytes.NewReader(b))
		if err == nil && !resp.OK {
			t.Fatalf("failed response decoded without error: %q", b)
		}
	})
}

// FuzzReadOnlyOps runs read-only operations with fuzzed paths and patterns
// against a small tree: no panic, no result beyond its cap.
func FuzzReadOnlyOps(f *testing.F) {
	f.Add("read", "a.txt", "", "", 0, 0)
	f.Add("grep", "", "TODO|x+", "*.py", 0, 0)
	f.Add("glob", "src", "**/*.py", "", 0, 0)
	f.Add("list", "..", "", "", 0, 0)
	f.Add("stat", "link", "", "", 0, 0)
	f.Add("read", "a.txt", "", "", 2, 1)
	f.Fuzz(func(t *testing.T, op, p, pattern, glob string, offset, limit int) {
		switch op {
		case OpRead, OpList, OpGlob, OpGrep, OpStat:
		default:
			return
		}
		s, _ := newTestServer(t)
		// Keep fuzzed paths inside the test tree.
		p = strings.TrimLeft(path.Clean("/"+p), "/")
		resp := s.Do(Request{Op: op, Path: p, Pattern: pattern, Glob: glob, Offset: offset, Limit: limit})
		if !resp.OK && resp.Kind == "" {
			t.Fatalf("error without kind: %+v", resp)
		}
		if len(resp.Paths) > MaxGlobResults || len(resp.Matches) > MaxGrepMatches || len(resp.Entries) > MaxListEntries {
			t.Fatalf("result over its cap")
		}
		if resp.Read != nil && len(resp.Read.Content) > MaxReadBytes+len("…[line truncated]\n") {
			t.Fatalf("read content over the cap: %d", len(resp.Read.Content))
		}
	})
}

func FuzzMatchGlob(f *testing.F) {
	f.Add("**/*.py", "a/b/c.py")
	f.Add("a/**/b/**/c", "a/x/b/y/c")
	f.Add("[", "x")
	f.Fuzz(func(t *testing.T, pattern, p string) {
		if len(pattern) > 200 || len(p) > 200 {
			return
		}
		MatchGlob(pattern, p)
	})
}

func FuzzCleanRel(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "/etc/passwd", "a/../../b", "./.", "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := CleanRel(s)
		if err != nil {
			return
		}
		if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") || strings.Contains(c, "/../") || c == "." {
			t.Fatalf("CleanRel(%q) = %q escapes the workspace", s, c)
		}
	})
}

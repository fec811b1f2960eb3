package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dimage "github.com/docker/docker/api/types/image"
)

func TestAgentHash(t *testing.T) {
	base := AgentHash(AgentOptions{})
	tests := []struct {
		name string
		opts AgentOptions
		same bool
	}{
		{"defaults spelled out", AgentOptions{Mirror: DefaultMirror, Suite: DefaultSuite, Packages: DefaultPackages}, true},
		{"package order", AgentOptions{Packages: []string{"procps", "python3-sklearn", "python3", "python3-numpy", "python3-pandas", "python3-scipy", "python3-matplotlib"}}, true},
		{"other ref and workdir", AgentOptions{Ref: "x:y", WorkDir: "/var/tmp", Force: true}, true},
		{"extra package", AgentOptions{Packages: append(append([]string(nil), DefaultPackages...), "python3-torch")}, false},
		{"other suite", AgentOptions{Suite: "trixie"}, false},
		{"other mirror", AgentOptions{Mirror: "http://mirror.example/debian"}, false},
	}
	for _, tt := range tests {
		got := AgentHash(tt.opts) == base
		if got != tt.same {
			t.Errorf("%s: same hash = %v, want %v", tt.name, got, tt.same)
		}
	}
}

func TestBuildAgentSkipsWhenHashMatches(t *testing.T) {
	c := engine(t)
	ctx := context.Background()
	repo := fmt.Sprintf("mass-agent-imagetest-%d", time.Now().UnixNano())
	ref := repo + ":latest"
	opts := AgentOptions{Ref: ref, Debootstrap: "/nonexistent/debootstrap"}
	hash := AgentHash(opts)
	rootfs, err := TestRootfs(DefaultBusybox)
	if err != nil {
		t.Fatal(err)
	}
	id, err := importTar(ctx, c, bytes.NewReader(rootfs), ref, labelChanges([][2]string{{LabelHash, hash}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.ImageRemove(context.Background(), id, dimage.RemoveOptions{Force: true}) })

	var log bytes.Buffer
	opts.Progress = &log
	res, err := BuildAgent(ctx, c, opts)
	if err != nil {
		t.Fatalf("BuildAgent with matching hash: %v", err)
	}
	if res.Built {
		t.Error("BuildAgent rebuilt an image whose recipe hash matches")
	}
	if got, want := res.ID, id; got != want {
		t.Errorf("id = %s, want %s", got, want)
	}
	if got, want := res.Tags[1], repo+":"+hash[:12]; got != want {
		t.Errorf("hash tag = %s, want %s", got, want)
	}
	if !strings.Contains(log.String(), "up to date") {
		t.Errorf("progress %q does not say the image is up to date", log.String())
	}

	changed := opts
	changed.Packages = []string{"python3"}
	_, err = BuildAgent(ctx, c, changed)
	if err == nil {
		t.Fatal("BuildAgent with a changed recipe did not try to rebuild")
	}
	if !strings.Contains(err.Error(), "debootstrap") {
		t.Errorf("rebuild error = %v, want it to name debootstrap", err)
	}
}

func TestWriteDirTar(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "proc/1"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	must(os.WriteFile(filepath.Join(root, "usr/bin/python3"), []byte("elf"), 0o755))
	must(os.Link(filepath.Join(root, "usr/bin/python3"), filepath.Join(root, "usr/bin/python3.11")))
	must(os.Symlink("/etc/shadow", filepath.Join(root, "usr/bin/link")))
	must(os.WriteFile(filepath.Join(root, "proc/1/status"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(root, "dev/null"), []byte("x"), 0o644))
	must(syscall.Mkfifo(filepath.Join(root, "usr/fifo"), 0o644))

	var buf bytes.Buffer
	must(writeDirTar(root, &buf))
	got := map[string]string{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(err)
		got[h.Name] = fmt.Sprintf("%c %s", h.Typeflag, h.Linkname)
	}
	want := map[string]string{
		"dev/":               "5 ",
		"proc/":              "5 ",
		"usr/":               "5 ",
		"usr/bin/":           "5 ",
		"usr/bin/link":       "2 /etc/shadow",
		"usr/bin/python3":    "0 ",
		"usr/bin/python3.11": "1 usr/bin/python3",
	}
	if len(got) != len(want) {
		t.Errorf("tar has %d entries %v, want %d %v", len(got), got, len(want), want)
	}
	for name, w := range want {
		if g := got[name]; g != w {
			t.Errorf("%s = %q, want %q", name, g, w)
		}
	}
}

// TestBuildAgentFull builds the real agent image with debootstrap (minutes,
// root, network to the Debian archive); it runs only when asked:
// MASS_IMAGE_AGENT_BUILD=1 go test -run TestBuildAgentFull -v ./sandbox/image
func TestBuildAgentFull(t *testing.T) {
	if os.Getenv("MASS_IMAGE_AGENT_BUILD") != "1" {
		t.Skip("set MASS_IMAGE_AGENT_BUILD=1 to build the agent image (minutes, needs root)")
	}
	c := engine(t)
	start := time.Now()
	res, err := BuildAgent(context.Background(), c, AgentOptions{Progress: os.Stderr, WorkDir: os.Getenv("MASS_IMAGE_WORKDIR")})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("agent image %s built=%v hash=%s packages=%d in %s", res.ID, res.Built, res.Hash[:12], len(res.Packages), time.Since(start))
	out := runIn(t, c, AgentRef, "python3 -c 'import numpy, pandas, scipy, matplotlib, sklearn; print(\"ok\", numpy.__version__)'; id -u")
	if !strings.HasPrefix(out, "ok ") {
		t.Errorf("python stack in agent image: %q", out)
	}
}

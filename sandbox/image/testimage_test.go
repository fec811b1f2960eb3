package image

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	dimage "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
)

// engine returns a client for the local engine or skips loudly.
func engine(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Skipf("SKIP: NO DOCKER ENGINE: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Ping(ctx); err != nil {
		t.Skipf("SKIP: NO DOCKER ENGINE REACHABLE: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestTestRootfsDeterministic(t *testing.T) {
	a, err := TestRootfs(DefaultBusybox)
	if err != nil {
		t.Fatal(err)
	}
	b, err := TestRootfs(DefaultBusybox)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("two renders of the test rootfs differ")
	}
	seen := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(a))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[h.Name] = h
	}
	tests := []struct {
		name string
		typ  byte
		uid  int
	}{
		{"bin/busybox", tar.TypeReg, 0},
		{"bin/sh", tar.TypeSymlink, 0},
		{"etc/passwd", tar.TypeReg, 0},
		{"tmp/", tar.TypeDir, 0},
		{"workspace/", tar.TypeDir, 65534},
	}
	for _, tt := range tests {
		h, ok := seen[tt.name]
		if !ok {
			t.Errorf("rootfs lacks %s", tt.name)
			continue
		}
		if got, want := h.Typeflag, tt.typ; got != want {
			t.Errorf("%s type = %c, want %c", tt.name, got, want)
		}
		if got, want := h.Uid, tt.uid; got != want {
			t.Errorf("%s uid = %d, want %d", tt.name, got, want)
		}
	}
}

func TestCheckStaticRejectsDynamic(t *testing.T) {
	tests := []struct {
		path    string
		wantErr bool
	}{
		{DefaultBusybox, false},
		{"/bin/ls", true},
		{"/etc/passwd", true},
		{"/nonexistent/busybox", true},
	}
	for _, tt := range tests {
		err := checkStatic(tt.path)
		if got, want := err != nil, tt.wantErr; got != want {
			t.Errorf("checkStatic(%s) error = %v, want error %v", tt.path, err, want)
		}
	}
}

func TestReadStream(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{`{"status":"sha256:abc"}`, ""},
		{`{"status":"x"}{"errorDetail":{"message":"bad tar"},"error":"bad tar"}`, "bad tar"},
		{`{"error":"plain"}`, "plain"},
		{`{"status":`, "read engine stream"},
	}
	for _, tt := range tests {
		err := readStream(strings.NewReader(tt.in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tt.wantErr) || (tt.wantErr == "") != (err == nil) {
			t.Errorf("readStream(%q) = %v, want %q", tt.in, err, tt.wantErr)
		}
	}
}

func TestBuildTestIdempotent(t *testing.T) {
	c := engine(t)
	ctx := context.Background()
	ref := fmt.Sprintf("mass-test-imagetest:%d", time.Now().UnixNano())
	t.Cleanup(func() {
		c.ImageRemove(context.Background(), ref, dimage.RemoveOptions{Force: true, PruneChildren: true})
	})
	first, err := BuildTest(ctx, c, TestOptions{Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Built {
		t.Fatalf("first build of fresh ref %s reported no build", ref)
	}
	second, err := BuildTest(ctx, c, TestOptions{Ref: ref})
	if err != nil {
		t.Fatal(err)
	}
	if second.Built {
		t.Error("second build with an unchanged recipe rebuilt the image")
	}
	if got, want := second.ID, first.ID; got != want {
		t.Errorf("image id after no-op build = %s, want %s", got, want)
	}
	if got, want := second.Hash, first.Hash; got != want {
		t.Errorf("hash = %s, want %s", got, want)
	}
	forced, err := BuildTest(ctx, c, TestOptions{Ref: ref, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !forced.Built {
		t.Error("forced build did not build")
	}
	info, err := c.ImageInspect(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := info.Config.Labels[LabelHash], first.Hash; got != want {
		t.Errorf("label %s = %q, want %q", LabelHash, got, want)
	}
	out := runIn(t, c, ref, "id -u; id -g; ls -ld /workspace | awk '{print $3}'; echo hello")
	if got, want := out, "65534\n65534\nnobody\nhello\n"; got != want {
		t.Errorf("container output = %q, want %q", got, want)
	}
}

func TestEnsureTestTagsLatest(t *testing.T) {
	c := engine(t)
	ctx := context.Background()
	res, err := EnsureTest(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Ref, TestRef; got != want {
		t.Errorf("ref = %s, want %s", got, want)
	}
	again, err := EnsureTest(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if again.Built {
		t.Error("EnsureTest rebuilt an up-to-date image")
	}
}

// runIn runs a shell script in a throwaway container as nobody and returns stdout.
func runIn(t *testing.T, c *client.Client, ref, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	created, err := c.ContainerCreate(ctx, &container.Config{
		Image: ref, User: "65534:65534", Cmd: []string{"/bin/sh", "-c", script},
	}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.ContainerRemove(context.Background(), created.ID, container.RemoveOptions{Force: true})
	if err := c.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	waitC, errC := c.ContainerWait(ctx, created.ID, container.WaitConditionNotRunning)
	select {
	case <-waitC:
	case err := <-errC:
		t.Fatal(err)
	}
	logs, err := c.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	var stdout, stderr bytes.Buffer
	if _, err := stdcopy.StdCopy(&stdout, &stderr, logs); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() > 0 {
		fmt.Fprintf(os.Stderr, "container stderr: %s\n", stderr.String())
	}
	return stdout.String()
}

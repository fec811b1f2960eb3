package kubernetes

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
	"github.com/mass-dev/mass/sandbox/workspace"
)

// TestExportLeavesOutSparseFile is the Docker backend's test of the same
// name on the cluster: a 1 TiB sparse file is left out with a note, the
// rest of the workspace (its siblings, later directories, a hard link) is
// exported within the cap, and the terabyte of holes is never read.
func TestExportLeavesOutSparseFile(t *testing.T) {
	for _, rtName := range []string{sandbox.RuntimeRunsc, sandbox.RuntimeRunc} {
		t.Run(rtName, func(t *testing.T) { exportLeavesOutSparseFile(t, rtName) })
	}
}

func exportLeavesOutSparseFile(t *testing.T, runtime string) {
	p := testPolicy(runtime)
	rt := clusterRuntime(t, p)
	h := sandboxtest.Harness{Runtime: rt, Image: envOr("MASS_K8S_TEST_IMAGE", "mass-test-k8s:latest"), Policy: p}
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{}, nil)
	sb := h.NewSandbox(t, ep, "a")
	res := sandboxtest.Sh(t, sb, "mkdir -p a m/q && echo a > a/x && echo n > m/n && echo q > m/q/r && echo z > z && "+
		"dd if=/dev/zero of=m/big bs=1 count=0 seek=1099511627776 2>/dev/null && ln z m/zz && stat -c %s m/big")
	if got := strings.TrimSpace(string(res.Stdout)); got != "1099511627776" {
		t.Fatalf("sparse file: %q %q", got, res.Stderr)
	}
	var buf bytes.Buffer
	start := time.Now()
	m, err := rt.ExportWorkspace(context.Background(), ep, &buf, 1<<20)
	if err != nil {
		t.Fatalf("export with a sparse file: %v", err)
	}
	t.Logf("export with a 1 TiB sparse file: %d entries, %d bytes in %s", len(m), buf.Len(), time.Since(start).Round(time.Millisecond))
	noted := false
	for _, f := range m {
		if f.Path == "m/big" {
			noted = f.Omitted != "" && f.Size == 1<<40
		}
	}
	if !noted {
		t.Errorf("manifest lacks m/big of 1 TiB with a note: %+v", m)
	}
	files := map[string]string{}
	exported := bytes.Clone(buf.Bytes())
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		files[h.Name] = string(body)
	}
	want := map[string]string{"a/x": "a\n", "m/n": "n\n", "m/q/r": "q\n", "z": "z\n", "m/zz": "z\n"}
	for n, c := range want {
		if files[n] != c {
			t.Errorf("export %s = %q, want %q (export holds %d entries)", n, files[n], c, len(files))
		}
	}
	if _, ok := files["m/big"]; ok {
		t.Errorf("export holds m/big")
	}
	if err := workspace.Verify(bytes.NewReader(exported), m, workspace.DefaultLimits); err != nil {
		t.Errorf("verify export against its manifest: %v", err)
	}
	// The keeper's tar of the whole tree was killed, not left reading holes.
	if got := strings.TrimSpace(string(sandboxtest.Sh(t, sb, "ps -o args | grep '^tar' || true").Stdout)); got != "" {
		t.Errorf("tar still runs in the box's view: %s", got)
	}
}

package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// TestGradeConcurrently runs several graders at once, as a generation's
// episodes finish together: each must prepare its workspace and run.
func TestGradeConcurrently(t *testing.T) {
	rt := needEngine(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "grader"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "grader", "check.sh"), []byte("cat answer.txt; echo '{\"passed\": true}'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	tw := tar.NewWriter(&exp)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "answer.txt", Mode: 0o644, Size: 3})
	_, _ = tw.Write([]byte("42\n"))
	_ = tw.Close()
	const n, rounds = 6, 3
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g := sandbox.GradeSpec{Workspace: sandboxtest.Episode(t), Export: bytes.NewReader(exp.Bytes()), Replace: []string{"grader"},
					Inputs:  []sandbox.Input{{HostPath: filepath.Join(dir, "grader"), Dest: "grader"}},
					Command: "sh grader/check.sh", Timeout: time.Minute, Image: testImage, Policy: testPolicy()}
				res, err := rt.Grade(context.Background(), g)
				if err == nil && res.ExitCode != 0 {
					err = fmt.Errorf("grader exit %d: %q %q", res.ExitCode, res.Stdout, res.Stderr)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d grader %d: %v", round, i, err)
			}
		}
	}
}

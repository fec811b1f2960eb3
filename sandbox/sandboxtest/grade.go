package sandboxtest

import (
	"archive/tar"
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
)

// gradeScript is the shipped grader: it fails loudly when the grader's
// world is not the one Runtime.Grade promises (sandbox.GraderEnv
// included).
const gradeScript = `[ ! -e link ] || { echo "a symlink from the export came through"; exit 5; }
if touch /workspace/probe 2>/dev/null; then echo "the workspace is writable"; exit 6; fi
[ "$PATH" = "` + sandbox.GraderPath + `" ] || { echo "PATH is $PATH"; exit 7; }
[ "$PYTHONSAFEPATH" = 1 ] && [ "$PYTHONNOUSERSITE" = 1 ] || { echo "python may import from the workspace"; exit 8; }
read -r want < secret/labels.txt
read -r got < answer.txt
if [ "$want" = "$got" ]; then p=true; else p=false; fi
echo "noise line"
echo "{\"passed\": $p, \"score\": 1}"
`

// testGrade builds an export tar by hand (an answer, a tampered grader, a
// symlink into the hidden path) and checks that Grade replaces the
// protected and hidden paths with what was shipped, drops the link,
// mounts the workspace read-only and leaves nothing behind.
func testGrade(t *testing.T, h Harness) {
	t.Parallel()
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "eval", "grade.sh"), gradeScript)
	mustWrite(t, filepath.Join(dir, "secret", "labels.txt"), "42\n")
	var exp bytes.Buffer
	tw := tar.NewWriter(&exp)
	add := func(name, body string) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))})
		_, _ = tw.Write([]byte(body))
	}
	add("answer.txt", "42\n")
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "eval/", Mode: 0o755})
	add("eval/grade.sh", "echo '{\"passed\": true}'\n")
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "secret/labels.txt"})
	_ = tw.Close()

	ws := Episode(t)
	g := sandbox.GradeSpec{Workspace: ws, Export: bytes.NewReader(exp.Bytes()), Replace: []string{"eval", "secret"},
		Inputs:  []sandbox.Input{{HostPath: filepath.Join(dir, "eval"), Dest: "eval"}, {HostPath: filepath.Join(dir, "secret"), Dest: "secret"}},
		Command: "sh eval/grade.sh", Timeout: time.Minute, Image: h.Image, Policy: h.policy()}
	ctx := context.Background()
	res, err := h.Runtime.Grade(ctx, g)
	if err != nil {
		t.Fatalf("Grade: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if res.ExitCode != 0 || lines[len(lines)-1] != `{"passed": true, "score": 1}` {
		t.Errorf("grader: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if left, err := h.Runtime.List(ctx, ws); err != nil || len(left) > 0 {
		t.Errorf("Grade left %v behind (err %v)", left, err)
	}
	g.Export, g.Workspace = strings.NewReader(""), Episode(t)
	g.Policy.NetworkMode = "bridge"
	if _, err := h.Runtime.Grade(ctx, g); err == nil {
		t.Errorf("Grade with network on: no error")
	}
}

package helper

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// buildHelper compiles the static helper once per test binary.
func buildHelper(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mass-sandbox-helper")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/mass-sandbox-helper")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build helper: %v\n%s", err, out)
	}
	return bin
}

// alive lists processes whose command line contains marker.
func alive(marker string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), marker) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // zombie waiting for its reaper
			}
			out = append(out, e.Name())
		}
	}
	return out
}

func TestExecWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helper binary")
	}
	bin := buildHelper(t)
	tests := []struct {
		name   string
		args   []string
		want   int
		marker string
		stdout string
		stdin  string
	}{
		{name: "exit status", args: []string{"sh", "-c", "exit 7"}, want: 7},
		{name: "stdin passes through", args: []string{"cat"}, stdin: "in", stdout: "in"},
		{name: "missing command", args: []string{"/no/such/cmd"}, want: 127},
		{name: "signalled", args: []string{"sh", "-c", "kill -9 $$"}, want: 137},
		{name: "timeout kills the tree", args: []string{"-timeout", "300ms", "--", "sh", "-c", "sleep 1001.25 & setsid sleep 1001.25 & sleep 1001.25"},
			want: ExitTimedOut, marker: "1001.25"},
		{name: "background dies with its command", args: []string{"sh", "-c", "setsid sleep 1002.25 & echo bg"},
			stdout: "bg\n", marker: "1002.25"},
	}
	for _, tt := range tests {
		args := append([]string{"exec"}, tt.args...)
		if tt.args[0] != "-timeout" {
			args = append([]string{"exec", "--"}, tt.args...)
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(tt.stdin)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got, want := code, tt.want; got != want {
			t.Errorf("%s: exit %d, want %d", tt.name, got, want)
		}
		if tt.stdout != "" && string(out) != tt.stdout {
			t.Errorf("%s: stdout %q, want %q", tt.name, out, tt.stdout)
		}
		if tt.marker != "" {
			if got := alive(tt.marker); len(got) > 0 {
				t.Errorf("%s: processes %v survived", tt.name, got)
				for _, p := range got {
					if pid, err := strconv.Atoi(p); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		}
	}
}

func TestPrepare(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("Prepare changes ownership; run as root (it runs as root in the workspace keeper)")
	}
	root := t.TempDir()
	for _, f := range []string{"eval/score.py", "eval/data/truth.csv", "src/a.py"} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc", filepath.Join(root, "etclink")); err != nil {
		t.Fatal(err)
	}
	if err := Prepare(root, 1234, 1234, []string{"eval/score.py", "eval/data"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		uid      uint32
		mode     os.FileMode
		checkMod bool
	}{
		{".", 0, 0o777 | os.ModeSticky | os.ModeDir, true},
		{"eval", 0, 0o777 | os.ModeSticky | os.ModeDir, true},
		{"eval/score.py", 0, 0o644, true},
		{"eval/data", 0, 0o755 | os.ModeDir, true},
		{"eval/data/truth.csv", 0, 0o644, true},
		{"src", 1234, 0, false},
		{"src/a.py", 1234, 0, false},
		{"etclink", 1234, 0, false},
	}
	for _, tt := range tests {
		fi, err := os.Lstat(filepath.Join(root, tt.path))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != tt.uid {
			t.Errorf("%s: uid %d, want %d", tt.path, st.Uid, tt.uid)
		}
		if tt.checkMod && fi.Mode() != tt.mode {
			t.Errorf("%s: mode %v, want %v", tt.path, fi.Mode(), tt.mode)
		}
	}
	if st, _ := os.Stat("/etc"); st.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Errorf("Prepare followed a symlink to /etc")
	}
	for _, bad := range []string{"../x", "/etc", "missing", "etclink"} {
		if err := Prepare(root, 1234, 1234, []string{bad}); err == nil {
			t.Errorf("Prepare accepted protected path %q", bad)
		}
	}
}

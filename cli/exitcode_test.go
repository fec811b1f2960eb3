package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/jobs"
	"github.com/mass-dev/mass/jobkind"
)

// failKind is a job kind that fails at once with a message.
func failKind() jobkind.Kind {
	return jobkind.Kind{Name: "failing", Description: "fails at once",
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			return errors.New("the grader found no report.md")
		}}
}

// TestExitCodes runs massctl commands in-process and checks the documented
// exit code of each outcome (issue: every failure exited 1).
func TestExitCodes(t *testing.T) {
	sock := startDaemon(t, jobs.WaitKind(), failKind()).Socket
	dead := filepath.Join(t.TempDir(), "none.sock")
	if _, err := run(t, "--socket", sock, "task", "add", "../examples/tasks/projectile-sim/task.yaml"); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, "--socket", sock, "job", "start", "failing", "--task", "projectile-sim")
	if err != nil {
		t.Fatal(err)
	}
	failed := strings.TrimSpace(out)
	bad := filepath.Join(t.TempDir(), "task.yaml")
	if err := os.WriteFile(bad, []byte("id: t\nprompt: p\nlimits:\n  cpus: two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"ok", []string{"--socket", sock, "status"}, 0, ""},
		{"unknown flag", []string{"--socket", sock, "status", "--bogus"}, ExitUsage, "flag provided but not defined"},
		{"missing argument", []string{"--socket", sock, "job", "show"}, ExitUsage, "needs exactly one"},
		{"invalid spec", []string{"task", "validate", bad}, ExitUsage, "1 of 1 specs are invalid"},
		{"not found", []string{"--socket", sock, "job", "show", "job-nosuch"}, ExitNotFound, ""},
		{"no daemon", []string{"--socket", dead, "status"}, ExitNoDaemon, "not running"},
		{"job failed", []string{"--socket", sock, "job", "watch", failed}, ExitJobFailed, "the grader found no report.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, tt.args...)
			if got := ExitCode(err); got != tt.want {
				t.Errorf("exit %d, want %d (err %v)", got, tt.want, err)
			}
			if err != nil && !strings.Contains(Explain(err), tt.msg) {
				t.Errorf("message %q lacks %q", Explain(err), tt.msg)
			}
		})
	}
}

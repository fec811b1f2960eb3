package prompts

import (
	"errors"
	"strings"
	"testing"
)

// A directive written the way the reference's is (markdown heading,
// numbered rules, trailing newline) goes in byte for byte.
const foreignDirective = "## Rules for the team (test fixture)\n\n1. Delegate each role through the `agent` tool with `run_in_background: false`.\n2. Verify every report before the next stage.\n"

func TestTeacherWith(t *testing.T) {
	got, err := TeacherWith(" task\n", "[workflow]\n", foreignDirective)
	if err != nil {
		t.Fatal(err)
	}
	if want := "task\n\n[workflow]\n\n" + foreignDirective; got != want {
		t.Errorf("teacher prompt = %q, want %q", got, want)
	}
	if got, _ := TeacherWith("task", "[workflow]", ""); got != Teacher("task", "[workflow]") {
		t.Errorf("empty directive did not fall back to ours: %q", got)
	}
	if got, _ := TeacherWith("task", " ", foreignDirective); got != "task" {
		t.Errorf("bare prompt got a directive: %q", got)
	}
	for _, bad := range []string{" \n\t", "a\x00b", "\xff\xfe", strings.Repeat("x", MaxDirectiveBytes+1)} {
		if _, err := TeacherWith("task", "[workflow]", bad); !errors.Is(err, ErrDirective) {
			t.Errorf("directive %.20q: err = %v, want ErrDirective", bad, err)
		}
	}
}

func FuzzCheckDirective(f *testing.F) {
	f.Add(foreignDirective)
	f.Add("\x00")
	f.Fuzz(func(t *testing.T, s string) {
		if err := CheckDirective(s); err != nil {
			if !errors.Is(err, ErrDirective) {
				t.Fatalf("error %v does not wrap ErrDirective", err)
			}
			return
		}
		got, err := TeacherWith("t", "w", s)
		if err != nil || !strings.HasSuffix(got, s) {
			t.Fatalf("accepted directive not appended verbatim: %v", err)
		}
	})
}

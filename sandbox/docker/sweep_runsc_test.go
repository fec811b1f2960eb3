package docker

import (
	"slices"
	"testing"
)

const runscPSSample = `UID       PID       PPID      C         TTY       STIME     TIME      CMD
65532     1         0         0         ?         16:54     0s        docker-init
65532     2         1         0         ?         16:54     0s        mass-sandbox-he
65534     15        0         0         ?         16:54     10ms      mass-sandbox-he
65534     16        0         0         ?         16:54     10ms      sh
65534     17        16        0         ?         16:54     10ms      mass-sandbox-he
65534     18        1         0         ?         16:54     0s        sleep me
`

func TestAgentProcs(t *testing.T) {
	procs, err := parseRunscPS([]byte(runscPSSample))
	if err != nil || len(procs) != 6 {
		t.Fatalf("parse: %v %v", procs, err)
	}
	pids := func(ps []runscProc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.pid)
		}
		return out
	}
	// The session (ppid 0, the helper) is spared only when asked; the
	// agent's own process named like the helper (ppid 16) never is, nor
	// are the main processes of another uid touched.
	if got, want := pids(agentProcs(procs, 65534, true)), []int{16, 17, 18}; !slices.Equal(got, want) {
		t.Errorf("keeping the session: %v, want %v", got, want)
	}
	if got, want := pids(agentProcs(procs, 65534, false)), []int{15, 16, 17, 18}; !slices.Equal(got, want) {
		t.Errorf("sparing none: %v, want %v", got, want)
	}
	if _, err := parseRunscPS([]byte("UID PID\nx 1 0 0 ? t t c\n")); err == nil {
		t.Error("a non-numeric uid parsed")
	}
}

// FuzzParseRunscPS: process names come from the agent (comm is settable).
func FuzzParseRunscPS(f *testing.F) {
	f.Add([]byte(runscPSSample))
	f.Add([]byte("UID\n1 2 3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		procs, err := parseRunscPS(b)
		if err != nil {
			return
		}
		_ = agentProcs(procs, 65534, true)
	})
}

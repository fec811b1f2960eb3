package ledger

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

const crashChildEnv = "MASS_LEDGER_CRASH_CHILD"

// TestCrashChild is the child process of TestKillMidAppend: it appends from
// four goroutines forever and prints each acknowledged seq.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashChildEnv)
	if path == "" {
		t.Skip("child process of TestKillMidAppend")
	}
	w, err := Create(path, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				r, err := w.Append(sampleRecord(g*1000000 + i))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				out.WriteString(strconv.FormatInt(r.Seq, 10) + "\n")
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestKillMidAppend SIGKILLs a process that is appending and checks that
// every acknowledged record survives and the chain continues on reopen.
func TestKillMidAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var maxAcked int64
	for acks := 0; acks < 150 && sc.Scan(); acks++ {
		if s, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil && s > maxAcked {
			maxAcked = s
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if maxAcked == 0 {
		t.Fatal("child acknowledged no appends")
	}

	w, err := Create(path, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := w.Head()
	if seq < maxAcked {
		t.Errorf("reopened head seq %d < acknowledged seq %d: acknowledged records lost", seq, maxAcked)
	}
	r, err := w.Append(sampleRecord(1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Seq, seq+1; got != want {
		t.Errorf("seq after reopen = %d, want %d", got, want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	assertVerifies(t, path, int(seq+1))
}

package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const testEpisode = "ep-test"

// writeLedger appends n varied records to a fresh ledger and returns its path.
func writeLedger(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	w, err := Create(path, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := w.Append(sampleRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func sampleRecord(i int) Record {
	tools := []string{"write_file", "read_file", "run_shell_command", "edit", "agent"}
	return Record{
		Agent:       fmt.Sprintf("worker-%d", i%3),
		Tool:        tools[i%len(tools)],
		ArgsSHA256:  fmt.Sprintf("%064x", i),
		Path:        fmt.Sprintf("/workspace/f%d.py", i),
		Bytes:       int64(100 + i),
		SHA256After: fmt.Sprintf("%064x", i+1000),
		OK:          i%4 != 3,
		ExitCode:    i % 2,
		DurationMS:  float64(i) + 0.25,
		Detail:      json.RawMessage(fmt.Sprintf(`{"z":1,"a":"<x & y>","n":[%d,1.5e-7]}`, i)),
	}
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

func TestAppendReadVerify(t *testing.T) {
	path := writeLedger(t, 7)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recs), 7; got != want {
		t.Fatalf("records = %d, want %d", got, want)
	}
	prev := Genesis(testEpisode)
	for i, r := range recs {
		want := sampleRecord(i)
		if got, want := r.Seq, int64(i+1); got != want {
			t.Errorf("record %d seq = %d, want %d", i, got, want)
		}
		if got, want := r.Prev, prev; got != want {
			t.Errorf("record %d prev = %s, want %s", i, got, want)
		}
		if r.Agent != want.Agent || r.Tool != want.Tool || r.Path != want.Path || r.Bytes != want.Bytes ||
			r.OK != want.OK || r.ExitCode != want.ExitCode || r.DurationMS != want.DurationMS || r.Episode != testEpisode {
			t.Errorf("record %d = %+v, want fields of %+v", i, r, want)
		}
		if r.TS.IsZero() || r.TS.Location() != time.UTC {
			t.Errorf("record %d ts = %v, want a UTC time", i, r.TS)
		}
		prev = r.Hash
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	n, err := Verify(f, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 7; got != want {
		t.Errorf("verified %d, want %d", got, want)
	}
}

// TestKnownHash pins the hash definition: prev + "\n" + canonical JSON with
// sorted keys, numbers verbatim, no HTML escaping.
func TestKnownHash(t *testing.T) {
	line := []byte(`{"seq":1,"ts":"2026-11-29T15:00:00Z","episode":"ep-1","agent":"orchestrator","tool":"agent",` +
		`"args_sha256":"","path":"","bytes":0,"sha256_before":"","sha256_after":"","ok":true,"exit_code":0,` +
		`"error":"","duration_ms":1.50,"detail":{"role":"worker","a":"<&>"},"prev":"p","hash":"ignored"}`)
	canon := `{"agent":"orchestrator","args_sha256":"","bytes":0,"detail":{"a":"<&>","role":"worker"},` +
		`"duration_ms":1.50,"episode":"ep-1","error":"","exit_code":0,"ok":true,"path":"","prev":"p",` +
		`"seq":1,"sha256_after":"","sha256_before":"","tool":"agent","ts":"2026-11-29T15:00:00Z"}`
	got, err := Canonical(line)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != canon {
		t.Fatalf("canonical =\n%s\nwant\n%s", got, canon)
	}
	sum := sha256.Sum256([]byte("p\n" + canon))
	if got, want := ChainHash("p", got), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("hash = %s, want %s", got, want)
	}
	gen := sha256.Sum256([]byte("mass-ledger-v1:ep-1"))
	if got, want := Genesis("ep-1"), hex.EncodeToString(gen[:]); got != want {
		t.Errorf("genesis = %s, want %s", got, want)
	}
}

func TestCanonicalIgnoresKeyOrderAndSpacing(t *testing.T) {
	a, err := Canonical([]byte(`{"b":1,"a":{"y":"\u0041","x":[1, 2]},"hash":"h"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Canonical([]byte(` { "a" : {"x":[1,2],"y":"A"}, "b":1 } `))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("canonical differs:\n%s\n%s", a, b)
	}
	for _, bad := range []string{`[]`, `null`, `{"a":1} {}`, `{`, `"x"`} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%s) = nil error, want an error", bad)
		}
	}
}

func TestConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	w, err := Create(path, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	seqs := make(chan int64, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r, err := w.Append(sampleRecord(g*each + i))
				if err != nil {
					t.Error(err)
					return
				}
				seqs <- r.Seq
			}
		})
	}
	wg.Wait()
	close(seqs)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for s := range seqs {
		if seen[s] {
			t.Errorf("seq %d returned twice", s)
		}
		seen[s] = true
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := Verify(f, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, goroutines*each; got != want {
		t.Errorf("verified %d, want %d", got, want)
	}
	if _, err := w.Append(sampleRecord(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("append after close = %v, want ErrClosed", err)
	}
}

func TestAppendRejectsBadInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.jsonl")
	w, err := Create(path, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Append(Record{Tool: "x", Detail: json.RawMessage(`{"a":`)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad detail: err = %v, want ErrInvalid", err)
	}
	if seq, _ := w.Head(); seq != 0 {
		t.Errorf("head seq after rejected append = %d, want 0", seq)
	}
	if _, err := Create(path, testEpisode); err == nil {
		t.Error("second writer on an open ledger: nil error, want a lock error")
	}
	if _, err := Create(filepath.Join(t.TempDir(), "l"), ""); err == nil {
		t.Error("empty episode: nil error, want an error")
	}
}

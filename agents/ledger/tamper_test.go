package ledger

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestVerifyDetectsTampering edits a real ledger in every way the issue
// names and checks Verify reports the first bad line.
func TestVerifyDetectsTampering(t *testing.T) {
	path := writeLedger(t, 6)
	orig := readLines(t, path)

	replace := func(ls [][]byte, i int, old, new string) [][]byte {
		out := append([][]byte{}, ls...)
		out[i] = bytes.Replace(ls[i], []byte(old), []byte(new), 1)
		if bytes.Equal(out[i], ls[i]) {
			t.Fatalf("line %d has no %q", i+1, old)
		}
		return out
	}
	// forged re-hashes a modified line so only the chain link can catch it.
	forged := func(ls [][]byte, i int) [][]byte {
		out := append([][]byte{}, ls...)
		rec, err := parseLine(i+1, out[i])
		if err != nil {
			t.Fatal(err)
		}
		rec.Agent = "intruder"
		rec.Hash = ""
		l, _ := encodeLine(rec)
		rec.Hash, _ = HashLine(rec.Prev, l)
		l, _ = encodeLine(rec)
		out[i] = append(l, '\n')
		return out
	}

	tests := []struct {
		name     string
		lines    [][]byte
		episode  string
		wantLine int
		wantText string
	}{
		{"edit ok flag", replace(orig, 2, `"ok":true`, `"ok":false`), testEpisode, 3, "hash mismatch"},
		{"edit path", replace(orig, 4, `/workspace/f4.py`, `/workspace/f9.py`), testEpisode, 5, "hash mismatch"},
		{"edit detail", replace(orig, 0, `"z":1`, `"z":2`), testEpisode, 1, "hash mismatch"},
		{"add field", replace(orig, 1, `"ok":`, `"extra":1,"ok":`), testEpisode, 2, "hash mismatch"},
		{"edit hash", replace(orig, 5, `"hash":"`, `"hash":"0`), testEpisode, 6, "hash mismatch"},
		{"drop middle", append(append([][]byte{}, orig[:2]...), orig[3:]...), testEpisode, 3, "seq 4, want 3"},
		{"drop first", orig[1:], testEpisode, 1, "seq 2, want 1"},
		{"reorder", [][]byte{orig[0], orig[2], orig[1], orig[3], orig[4], orig[5]}, testEpisode, 2, "seq 3, want 2"},
		{"insert duplicate", [][]byte{orig[0], orig[1], orig[1], orig[2], orig[3], orig[4], orig[5]}, testEpisode, 3, "seq 2, want 3"},
		{"forged rehash", forged(orig, 3), testEpisode, 5, "prev does not match"},
		{"wrong episode", orig, "ep-other", 1, "episode"},
		{"blank line", [][]byte{orig[0], []byte("\n"), orig[1]}, testEpisode, 2, "empty line"},
		{"garbage", [][]byte{orig[0], []byte("{not json\n")}, testEpisode, 2, "not a ledger record"},
		{"torn tail", [][]byte{orig[0], orig[1][:40]}, testEpisode, 2, "not a ledger record"},
		{"no final newline", [][]byte{orig[0], bytes.TrimSuffix(orig[1], []byte("\n"))}, testEpisode, 2, "no newline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Verify(bytes.NewReader(bytes.Join(tt.lines, nil)), tt.episode)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Verify = %v, want a *LineError", err)
			}
			if got, want := le.Line, tt.wantLine; got != want {
				t.Errorf("bad line = %d, want %d (%v)", got, want, err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not mention %q", err, tt.wantText)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
		})
	}
}

func TestReopenContinuesChain(t *testing.T) {
	path := writeLedger(t, 3)
	w, err := Create(path, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Append(sampleRecord(3))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Seq, int64(4); got != want {
		t.Errorf("seq after reopen = %d, want %d", got, want)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	assertVerifies(t, path, 4)
}

// TestReopenTornLine cuts the last line mid-way, as a crash during write
// would, and checks the reopened writer moves it aside and continues.
func TestReopenTornLine(t *testing.T) {
	tests := []struct {
		name string
		tail func(last []byte) []byte
	}{
		{"half line", func(last []byte) []byte { return last[:len(last)/2] }},
		{"no newline", func(last []byte) []byte { return bytes.TrimSuffix(last, []byte("\n")) }},
		{"zero filled", func(last []byte) []byte { return append(bytes.Repeat([]byte{0}, 30), '\n') }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLedger(t, 4)
			ls := readLines(t, path)
			tail := tt.tail(ls[3])
			if err := os.WriteFile(path, append(bytes.Join(ls[:3], nil), tail...), 0o640); err != nil {
				t.Fatal(err)
			}
			w, err := Create(path, testEpisode)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := w.Torn(), len(tail); got != want {
				t.Errorf("torn bytes = %d, want %d", got, want)
			}
			r, err := w.Append(sampleRecord(9))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := r.Seq, int64(4); got != want {
				t.Errorf("seq after torn reopen = %d, want %d", got, want)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			assertVerifies(t, path, 4)
			saved, err := os.ReadFile(path + TornSuffix)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(saved, bytes.TrimSuffix(tail, []byte("\n"))) {
				t.Errorf("torn side file = %q, want it to hold %q", saved, tail)
			}
		})
	}
}

func TestReopenRefusesTampered(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(ls [][]byte) [][]byte
		episode string
	}{
		{"edited", func(ls [][]byte) [][]byte {
			ls[1] = bytes.Replace(ls[1], []byte(`"ok":true`), []byte(`"ok":false`), 1)
			return ls
		}, testEpisode},
		{"garbage before end", func(ls [][]byte) [][]byte {
			return [][]byte{ls[0], []byte("junk\n"), ls[2], ls[3]}
		}, testEpisode},
		{"other episode", func(ls [][]byte) [][]byte { return ls }, "ep-other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLedger(t, 4)
			data := bytes.Join(tt.mutate(readLines(t, path)), nil)
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
			if w, err := Create(path, tt.episode); err == nil {
				w.Close()
				t.Fatal("Create on a tampered ledger: nil error, want an error")
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(after, data) {
				t.Error("Create changed a ledger it refused")
			}
		})
	}
}

func assertVerifies(t *testing.T, path string, want int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := Verify(f, testEpisode)
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("verified %d records, want %d", n, want)
	}
}

func TestReadRejectsHugeLine(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxLineBytes+10)
	_, err := Read(bytes.NewReader(big))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 1 {
		t.Errorf("Read(huge) = %v, want a line 1 error", err)
	}
}

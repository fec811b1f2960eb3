package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAppend measures durable appends from one goroutine (one fsync
// each).
func BenchmarkAppend(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "ledger.jsonl"), testEpisode)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rec := sampleRecord(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Append(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendParallel measures durable appends from many goroutines,
// where concurrent appends share fsyncs (group commit).
func BenchmarkAppendParallel(b *testing.B) {
	w, err := Create(filepath.Join(b.TempDir(), "ledger.jsonl"), testEpisode)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rec := sampleRecord(1)
	b.SetParallelism(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := w.Append(rec); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkVerify measures verifying a 1000-record ledger.
func BenchmarkVerify(b *testing.B) {
	data := mustRead(b, writeLedger(b, 1000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Verify(bytesReader(data), testEpisode); err != nil {
			b.Fatal(err)
		}
	}
}

func mustRead(b *testing.B, path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// BenchmarkHashRecord measures the CPU part of an Append (encode, canonical
// JSON, sha256) without the write and fsync.
func BenchmarkHashRecord(b *testing.B) {
	r := sampleRecord(1)
	r.Prev = Genesis(testEpisode)
	b.ReportAllocs()
	for b.Loop() {
		line, err := encodeLine(r)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := HashLine(r.Prev, line); err != nil {
			b.Fatal(err)
		}
	}
}

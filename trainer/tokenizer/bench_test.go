package tokenizer

import (
	"bufio"
	"encoding/json"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// chatCorpus is ~4 MB: the rendered fixture chats, then Go standard-library sources (code and
// prose, as in agent transcripts), so the word cache meets new words throughout.
func chatCorpus(tb testing.TB) string {
	var sb strings.Builder
	f, err := os.Open("testdata/chat.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var c struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			tb.Fatal(err)
		}
		sb.WriteString(c.Text)
	}
	const want = 4 << 20
	filepath.WalkDir(filepath.Join(build.Default.GOROOT, "src"), func(p string, d os.DirEntry, err error) error {
		if err != nil || sb.Len() >= want {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err == nil {
				sb.Write(b)
			}
		}
		return nil
	})
	return sb.String()
}

// BenchmarkEncode encodes the corpus with warm word caches (steady state);
// BenchmarkEncodeCold empties them before every pass.
func BenchmarkEncode(b *testing.B) { benchEncode(b, false) }

func BenchmarkEncodeCold(b *testing.B) { benchEncode(b, true) }

func benchEncode(b *testing.B, cold bool) {
	tok := testTokenizer(b)
	text := chatCorpus(b)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	cpu0 := cpuSeconds()
	var n int
	for i := 0; i < b.N; i++ {
		if cold {
			tok.pool = sync.Pool{}
		}
		n = len(tok.Encode(text))
	}
	// On a shared machine wall time understates speed; CPU time (all threads, GC included)
	// gives the per-core rate.
	cpu := cpuSeconds() - cpu0
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(len(text))*float64(b.N)/cpu/1e6, "MB/cpu-s")
	b.ReportMetric(float64(n)*float64(b.N)/cpu, "tokens/cpu-s")
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func BenchmarkDecode(b *testing.B) {
	tok := testTokenizer(b)
	ids := tok.Encode(chatCorpus(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _ := tok.Decode(ids)
		b.SetBytes(int64(len(s)))
	}
}

package sft

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBuild builds synthetic episodes shaped like the paper's (per episode ~140k
// supervised tokens over 7 threads of 30 calls). MASS_BENCH_EPISODES sets the episode count
// (default 2; the paper's dataset is 119 trajectories, ~17M supervised tokens).
func BenchmarkBuild(b *testing.B) {
	n := 2
	if v, err := strconv.Atoi(os.Getenv("MASS_BENCH_EPISODES")); err == nil && v > 0 {
		n = v
	}
	tok, tmpl := fixtures(b)
	root := b.TempDir()
	var dirs []string
	for i := 0; i < n; i++ {
		d := filepath.Join(root, fmt.Sprintf("ep-%04d", i))
		spec := SynthSpec{EpisodeID: filepath.Base(d), TaskID: fmt.Sprintf("task-%02d", i%8), Workers: 6, Turns: 30,
			ResponseWords: 500, ToolWords: 1500, Seed: uint64(i + 1)}
		if err := WriteSyntheticEpisode(d, spec); err != nil {
			b.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	var m *Manifest
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		m, err = Build(context.Background(), BuildConfig{Tokenizer: tok, Template: tmpl, Window: DefaultWindowConfig()}, dirs, filepath.Join(root, "out"))
		if err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(m.Total.SupervisedTokens), "supervised-tokens")
	b.ReportMetric(float64(m.Total.Windows), "windows")
	b.ReportMetric(float64(m.Total.SupervisedTokens)/sec, "supervised-tokens/s")
	b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
}

func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

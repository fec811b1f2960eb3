package app

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/model"
)

// TestBench runs bench on the micro preset and reads its table: one row per window
// length with the model's sizes and positive rates. Rates are not compared with
// anything; tests do not assert speed.
func TestBench(t *testing.T) {
	stdout, _ := mustRun(t, "bench", "--config", "micro", "--seq", "8,16", "--iters", "1", "--rank", "4")
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("bench printed %d lines, want a header and 2 rows:\n%s", len(lines), stdout)
	}
	if got, want := strings.Fields(lines[0]), []string{"model", "params", "lora", "seq", "train", "tok/s", "train", "tok/cpu-s",
		"eval", "tok/s", "eval", "tok/cpu-s", "peak", "RSS", "MiB"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("header %q", lines[0])
	}
	cfg, err := model.Preset("micro")
	if err != nil {
		t.Fatal(err)
	}
	params := 0
	for _, shape := range cfg.Expected() {
		n := 1
		for _, d := range shape {
			n *= d
		}
		params += n
	}
	wantParams := fmt.Sprintf("%.2fM", float64(params)/1e6)
	wantLoRA := fmt.Sprintf("%.2fM", float64(microRank4Params)/1e6)
	for i, seq := range []string{"8", "16"} {
		cols := strings.Fields(lines[1+i])
		if len(cols) != 9 {
			t.Errorf("row %q: %d columns, want 9", lines[1+i], len(cols))
			continue
		}
		if got, want := cols[:4], []string{"micro", wantParams, wantLoRA, seq}; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %d starts %v, want %v", i, got, want)
		}
		for _, c := range cols[4:] {
			if v, err := strconv.ParseFloat(c, 64); err != nil || !(v > 0) {
				t.Errorf("row %d: rate or RSS %q, want a positive number", i, c)
			}
		}
	}
}

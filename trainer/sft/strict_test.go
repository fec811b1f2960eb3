package sft

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildStrictNamesEmptyEpisode: with a window too small for any
// segment's header, a strict build fails naming the episode and why; a
// lenient one succeeds and lists the episode as empty.
func TestBuildStrictNamesEmptyEpisode(t *testing.T) {
	good := filepath.Join(t.TempDir(), "ep-known")
	writeKnownEpisode(t, good)
	tok, tmpl := fixtures(t)
	tiny := WindowConfig{MaxTokens: 8, ContextTokens: 0}
	cfg := BuildConfig{Tokenizer: tok, Template: tmpl, Window: tiny, Workers: 2, Strict: true}
	_, err := Build(context.Background(), cfg, []string{good}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), good) || !strings.Contains(err.Error(), "header_too_long") ||
		!strings.Contains(err.Error(), "no window with supervised tokens") {
		t.Fatalf("strict build with no window: %v", err)
	}
	cfg.Strict = false
	m, err := Build(context.Background(), cfg, []string{good}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.EmptyEpisodes) != 1 || m.EmptyEpisodes[0] != good || m.Dropped["header_too_long"] == 0 {
		t.Errorf("lenient manifest: empty %v, dropped %v", m.EmptyEpisodes, m.Dropped)
	}
	cfg.Strict, cfg.Window = true, DefaultWindowConfig()
	if m, err := Build(context.Background(), cfg, []string{good}, t.TempDir()); err != nil || len(m.EmptyEpisodes) != 0 {
		t.Errorf("strict build of a good episode: %v", err)
	}
}

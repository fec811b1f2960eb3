package sft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

// BuildConfig configures Build.
type BuildConfig struct {
	Tokenizer    *tokenizer.Tokenizer
	Template     *chat.Template
	TokenizerDir string // recorded in the manifest
	Window       WindowConfig
	Workers      int // episodes processed in parallel; 0 = GOMAXPROCS
	// Progress, if set, is called after each episode is written.
	Progress func(done, total int, episode string, windows int)
	Logger   *slog.Logger
}

// FindEpisodes expands paths into episode directories: a path holding episode.json is an
// episode; otherwise its subdirectories holding episode.json are. The result is sorted.
func FindEpisodes(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(p, "episode.json")); err == nil {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("episodes %s: %w", p, err)
		}
		n := 0
		for _, e := range ents {
			d := filepath.Join(p, e.Name())
			if _, err := os.Stat(filepath.Join(d, "episode.json")); e.IsDir() && err == nil {
				out = append(out, d)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s is not an episode directory and holds none", p)
		}
	}
	sort.Strings(out)
	return out, nil
}

type episodeResult struct {
	rows     []Row
	stats    Stats
	threads  int
	segments int
	dropped  map[string]int
	err      error
}

// Build renders and windows the episodes and writes rows.jsonl, windows.bin and
// manifest.json into outDir. Files are written under temporary names and renamed only when
// everything succeeded, so a failed build leaves no partial dataset.
func Build(ctx context.Context, cfg BuildConfig, episodeDirs []string, outDir string) (*Manifest, error) {
	if cfg.Tokenizer == nil || cfg.Template == nil {
		return nil, errors.New("build: tokenizer and template are required")
	}
	if cfg.Window.MaxTokens <= 0 || cfg.Window.ContextTokens < 0 {
		return nil, fmt.Errorf("build: bad window config %+v", cfg.Window)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("create dataset dir: %w", err)
	}
	rowsF, err := os.CreateTemp(outDir, ".rows-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create rows: %w", err)
	}
	defer os.Remove(rowsF.Name())
	defer rowsF.Close()
	binF, err := os.CreateTemp(outDir, ".bin-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create windows.bin: %w", err)
	}
	defer os.Remove(binF.Name())
	defer binF.Close()
	bw, err := NewBinaryWriter(binF)
	if err != nil {
		return nil, err
	}
	jw := newRowsWriter(rowsF)

	m := newManifest()
	m.Tokenizer, m.Template, m.TemplateHash = cfg.TokenizerDir, string(cfg.Template.Family), cfg.Template.SHA256
	m.MaxTokens, m.ContextTokens = cfg.Window.MaxTokens, cfg.Window.ContextTokens

	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([]chan episodeResult, len(episodeDirs))
	for i := range results {
		results[i] = make(chan episodeResult, 1)
	}
	sem := make(chan struct{}, workers)
	go func() {
		for i, dir := range episodeDirs {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for ; i < len(episodeDirs); i++ {
					results[i] <- episodeResult{err: ctx.Err()}
				}
				return
			}
			go func(i int, dir string) {
				results[i] <- buildEpisode(&cfg, dir)
			}(i, dir)
		}
	}()
	for i, dir := range episodeDirs {
		res := <-results[i]
		<-sem
		if res.err != nil {
			return nil, fmt.Errorf("episode %s: %w", dir, res.err)
		}
		for k := range res.rows {
			if err := jw.write(&res.rows[k]); err != nil {
				return nil, err
			}
			if err := bw.Write(&res.rows[k]); err != nil {
				return nil, err
			}
			m.add(&res.rows[k])
		}
		m.Episodes++
		m.Threads += res.threads
		m.Segments += res.segments
		addStats(&m.Stats, &res.stats)
		for k, v := range res.dropped {
			m.Dropped[k] += v
		}
		if len(res.rows) > 0 {
			m.taskCounts(res.rows[0].Task).Episodes++
		}
		log.Debug("episode built", "episode", dir, "windows", len(res.rows))
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(episodeDirs), dir, len(res.rows))
		}
	}
	if err := jw.flush(); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	for _, f := range []*os.File{rowsF, binF} {
		if err := f.Chmod(0o644); err != nil {
			return nil, fmt.Errorf("chmod %s: %w", f.Name(), err)
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("sync %s: %w", f.Name(), err)
		}
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if err := os.Rename(rowsF.Name(), filepath.Join(outDir, "rows.jsonl")); err != nil {
		return nil, fmt.Errorf("install rows.jsonl: %w", err)
	}
	if err := os.Rename(binF.Name(), filepath.Join(outDir, "windows.bin")); err != nil {
		return nil, fmt.Errorf("install windows.bin: %w", err)
	}
	if err := os.WriteFile(filepath.Join(outDir, "manifest.json"), append(mb, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write manifest: %w", err)
	}
	return m, nil
}

func buildEpisode(cfg *BuildConfig, dir string) episodeResult {
	ep, err := LoadEpisode(dir)
	if err != nil {
		return episodeResult{err: err}
	}
	var res episodeResult
	res.dropped = map[string]int{}
	segs := Segments(ep, cfg.Template.Family == chat.Qwen3, &res.stats)
	threads := map[string]bool{}
	for k := range segs {
		s := &segs[k]
		threads[s.Thread] = true
		r, err := cfg.Template.Render(s.Messages, s.Tools, chat.Options{})
		if err != nil {
			return episodeResult{err: fmt.Errorf("thread %s segment %d: %w", s.Thread, s.Index, err)}
		}
		enc := chat.Encode(cfg.Tokenizer, r)
		rows, err := Windows(s, r, enc, cfg.Window)
		if errors.Is(err, ErrHeaderTooLong) {
			res.dropped["header_too_long"]++
			continue
		}
		if err != nil {
			return episodeResult{err: fmt.Errorf("thread %s segment %d: %w", s.Thread, s.Index, err)}
		}
		if len(rows) == 0 {
			res.dropped["no_supervised_tokens"]++
		}
		for i := range rows {
			rows[i].Task, rows[i].Episode = ep.Meta.TaskID, ep.Meta.EpisodeID
		}
		res.rows = append(res.rows, rows...)
	}
	res.threads, res.segments = len(threads), len(segs)
	return res
}

func addStats(a, b *Stats) {
	a.Calls += b.Calls
	a.ErrorCalls += b.ErrorCalls
	a.Retries += b.Retries
	a.LengthCut += b.LengthCut
	a.TeacherReplaced += b.TeacherReplaced
	a.TeacherMissing += b.TeacherMissing
}

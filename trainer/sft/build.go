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

	"github.com/mass-dev/mass/agents/eligibility"
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
	Progress func(BuildProgress)
	Logger   *slog.Logger
	// Dataset labels the dataset for the eligibility predicate (dry-run or
	// not); IncludeIneligible builds excluded episodes too (they are listed
	// in the manifest as included_ineligible). Excluded, if set, hears
	// each episode the predicate excludes, with whether it was included.
	Dataset           eligibility.Dataset
	IncludeIneligible bool
	Excluded          func(x Exclusion, included bool)
	// Force replaces an existing dataset in the output directory.
	Force bool
	// Strict fails the build when an episode given yields no window with
	// supervised tokens, or the predicate excludes it, naming the episode
	// and why (the reference's --strict). Without it such episodes are
	// only counted (manifest empty_episodes).
	Strict bool
	// Format is the rows.jsonl format: FormatNative (default) or FormatReference.
	Format string
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

// Build renders and windows the episodes the eligibility predicate admits
// (all of them with IncludeIneligible) and writes rows.jsonl, windows.bin
// and manifest.json into outDir. An existing dataset there is refused
// unless Force. Files are written under temporary names and renamed only
// when everything succeeded, so a failed build leaves no partial dataset.
func Build(ctx context.Context, cfg BuildConfig, episodeDirs []string, outDir string) (*Manifest, error) {
	if cfg.Tokenizer == nil || cfg.Template == nil {
		return nil, errors.New("build: tokenizer and template are required")
	}
	if cfg.Window.MaxTokens <= 0 || cfg.Window.ContextTokens < 0 {
		return nil, fmt.Errorf("build: bad window config %+v", cfg.Window)
	}
	switch cfg.Format {
	case "", FormatNative, FormatReference:
	default:
		return nil, fmt.Errorf("build: rows format %q is neither %s nor %s", cfg.Format, FormatNative, FormatReference)
	}
	if err := checkOverwrite(outDir, cfg.Force); err != nil {
		return nil, err
	}
	keep, excluded := Select(episodeDirs, cfg.Dataset)
	m := newManifest()
	if cfg.Format == FormatReference {
		m.RowsFormat = FormatReference
	}
	m.DryRun, m.Excluded = cfg.Dataset.DryRun, excluded
	if cfg.IncludeIneligible {
		keep, m.Excluded, m.IncludedIneligible = episodeDirs, []Exclusion{}, excluded
	}
	for _, x := range excluded {
		if cfg.Strict && !cfg.IncludeIneligible {
			return nil, fmt.Errorf("build (strict): episode %s was selected but the eligibility predicate excludes it: %s", x.Episode, x.Reason)
		}
		if cfg.Excluded != nil {
			cfg.Excluded(x, cfg.IncludeIneligible)
		}
	}
	m.Tokenizer, m.Template, m.TemplateHash = cfg.TokenizerDir, string(cfg.Template.Family), cfg.Template.SHA256
	m.MaxTokens, m.ContextTokens = cfg.Window.MaxTokens, cfg.Window.ContextTokens
	out, err := createOutputs(outDir, cfg.Format)
	if err != nil {
		return nil, err
	}
	defer out.discard()
	if err := collect(ctx, &cfg, keep, out, m); err != nil {
		return nil, err
	}
	if err := out.install(m); err != nil {
		return nil, err
	}
	return m, nil
}

// outputs are a build's files under temporary names.
type outputs struct {
	dir         string
	rowsF, binF *os.File
	bw          *BinaryWriter
	jw          *rowsWriter
}

func createOutputs(outDir, format string) (*outputs, error) {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("create dataset dir: %w", err)
	}
	o := &outputs{dir: outDir}
	var err error
	if o.rowsF, err = os.CreateTemp(outDir, ".rows-*.tmp"); err != nil {
		return nil, fmt.Errorf("create rows: %w", err)
	}
	if o.binF, err = os.CreateTemp(outDir, ".bin-*.tmp"); err != nil {
		o.discard()
		return nil, fmt.Errorf("create windows.bin: %w", err)
	}
	if o.bw, err = NewBinaryWriter(o.binF); err != nil {
		o.discard()
		return nil, err
	}
	o.jw = newRowsWriter(o.rowsF, format)
	return o, nil
}

// discard removes what is left of the temporary files (nothing after install).
func (o *outputs) discard() {
	for _, f := range []*os.File{o.rowsF, o.binF} {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
}

// collect builds the episodes in parallel and writes their rows in order.
func collect(ctx context.Context, cfg *BuildConfig, dirs []string, o *outputs, m *Manifest) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results, sem := startWorkers(ctx, cfg, dirs)
	for i, dir := range dirs {
		res := <-results[i]
		if res.err != nil {
			return fmt.Errorf("episode %s: %w", dir, res.err) // cancel ends the producer
		}
		<-sem // a slot frees only when its rows are written: memory stays bounded
		if !res.supervised() {
			if cfg.Strict {
				return fmt.Errorf("episode %s (strict): %s", dir, res.why())
			}
			m.EmptyEpisodes = append(m.EmptyEpisodes, dir)
		}
		for k := range res.rows {
			if err := o.jw.write(&res.rows[k]); err != nil {
				return err
			}
			if err := o.bw.Write(&res.rows[k]); err != nil {
				return err
			}
			m.add(&res.rows[k])
		}
		m.addEpisode(&res)
		log.Debug("episode built", "episode", dir, "windows", len(res.rows))
		if cfg.Progress != nil {
			cfg.Progress(BuildProgress{Done: i + 1, Total: len(dirs), Episode: dir, Windows: len(res.rows), Dataset: m.Total})
		}
	}
	return nil
}

// BuildProgress is what Build reports after each episode: how far it is,
// the episode's windows and the dataset's running totals (windows, tokens,
// supervised tokens).
type BuildProgress struct {
	Done, Total int
	Episode     string
	Windows     int    // of this episode
	Dataset     Counts // so far
}

// startWorkers builds at most cfg.Workers episodes at a time; result i
// arrives on channel i, and the caller frees a slot of sem per result.
func startWorkers(ctx context.Context, cfg *BuildConfig, dirs []string) ([]chan episodeResult, chan struct{}) {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results := make([]chan episodeResult, len(dirs))
	for i := range results {
		results[i] = make(chan episodeResult, 1)
	}
	sem := make(chan struct{}, workers)
	go func() {
		for i, dir := range dirs {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for ; i < len(dirs); i++ {
					results[i] <- episodeResult{err: ctx.Err()}
				}
				return
			}
			go func(i int, dir string) {
				results[i] <- buildEpisode(cfg, dir)
			}(i, dir)
		}
	}()
	return results, sem
}

func (m *Manifest) addEpisode(res *episodeResult) {
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
}

// install flushes, syncs and renames the files into place and writes the manifest.
func (o *outputs) install(m *Manifest) error {
	if err := o.jw.flush(); err != nil {
		return err
	}
	if err := o.bw.Flush(); err != nil {
		return err
	}
	for _, f := range []*os.File{o.rowsF, o.binF} {
		if err := f.Chmod(0o644); err != nil {
			return fmt.Errorf("chmod %s: %w", f.Name(), err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", f.Name(), err)
		}
	}
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	if err := os.Rename(o.rowsF.Name(), filepath.Join(o.dir, "rows.jsonl")); err != nil {
		return fmt.Errorf("install rows.jsonl: %w", err)
	}
	if err := os.Rename(o.binF.Name(), filepath.Join(o.dir, "windows.bin")); err != nil {
		return fmt.Errorf("install windows.bin: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.dir, "manifest.json"), append(mb, '\n'), 0o644); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

func buildEpisode(cfg *BuildConfig, dir string) episodeResult {
	ep, err := LoadEpisode(dir)
	if err != nil {
		return episodeResult{err: err}
	}
	var res episodeResult
	res.dropped = map[string]int{}
	segs := Segments(ep, cfg.Template.SplitsQueries(), &res.stats)
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

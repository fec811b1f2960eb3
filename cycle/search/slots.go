package search

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/searchfmt"
)

// EpisodesFile records every episode slot of a search and its attempts.
const EpisodesFile = searchfmt.EpisodesFile

// Attempt is one try of a slot.
type Attempt struct {
	N         int    `json:"attempt"`
	EpisodeID string `json:"episode_id"`
	Status    string `json:"status"` // running, finished, interrupted, error
	Error     string `json:"error,omitempty"`
}

// Slot is one episode the search needs ("reference", "v0", "v2").
type Slot struct {
	Name     string         `json:"slot"`
	Attempts []Attempt      `json:"attempts"`
	Result   *EpisodeResult `json:"result,omitempty"`
}

// slots is the episodes file, shared by concurrent episode runs.
type slots struct {
	path string
	mu   sync.Mutex
	m    map[string]*Slot
}

func loadSlots(dir string) (*slots, error) {
	s := &slots{path: filepath.Join(dir, EpisodesFile), m: map[string]*Slot{}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read episode slots: %w", err)
	}
	var list []*Slot
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("parse %s: %w", s.path, err)
	}
	for _, sl := range list {
		s.m[sl.Name] = sl
	}
	return s, nil
}

// saveLocked writes the file; the caller holds mu.
func (s *slots) saveLocked() error {
	list := make([]*Slot, 0, len(s.m))
	for _, k := range slotOrder(s.m) {
		list = append(list, s.m[k])
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("encode episode slots: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o750); err != nil {
		return fmt.Errorf("create records dir: %w", err)
	}
	return workflow.WriteFileAtomic(s.path, append(b, '\n'))
}

func (s *slots) get(name string) (Slot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.m[name]
	if !ok {
		return Slot{}, false
	}
	return *sl, true
}

func (s *slots) update(name string, f func(*Slot)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.m[name]
	if !ok {
		sl = &Slot{Name: name}
		s.m[name] = sl
	}
	f(sl)
	return s.saveLocked()
}

func newEpisodeID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "ep-" + hex.EncodeToString(b[:])
}

// episode returns the finished result of a slot, running it if needed: a
// finished slot is never rerun; attempts a crash cut off are closed and
// counted, and the next attempt gets the next number.
func (r *runner) episode(ctx context.Context, slot, wf, prompt string, seed int) (EpisodeResult, error) {
	if sl, ok := r.slots.get(slot); ok && sl.Result != nil {
		return *sl.Result, nil
	}
	sl, _ := r.slots.get(slot)
	for i, a := range sl.Attempts {
		if a.Status != "running" {
			continue
		}
		if err := r.cfg.Episodes.Close(ctx, a.EpisodeID); err != nil {
			r.cfg.Log.Warn("close interrupted episode", "episode", a.EpisodeID, "err", err)
		}
		if err := r.slots.update(slot, func(s *Slot) { s.Attempts[i].Status = "interrupted" }); err != nil {
			return EpisodeResult{}, err
		}
	}
	req := EpisodeRequest{ID: newEpisodeID(), Slot: slot, Attempt: len(sl.Attempts) + 1, Workflow: wf, Prompt: prompt, Model: r.cfg.Model, Seed: seed}
	if err := r.slots.update(slot, func(s *Slot) {
		s.Attempts = append(s.Attempts, Attempt{N: req.Attempt, EpisodeID: req.ID, Status: "running"})
	}); err != nil {
		return EpisodeResult{}, err
	}
	r.progress(func(p *Progress) { p.Stage = "episode " + slot; p.Message = fmt.Sprintf("attempt %d", req.Attempt) })
	res, err := r.cfg.Episodes.Run(ctx, req)
	if ctx.Err() != nil {
		return EpisodeResult{}, ctx.Err() // left "running": the resumed search closes it
	}
	last := len(sl.Attempts)
	if err != nil {
		_ = r.slots.update(slot, func(s *Slot) { s.Attempts[last].Status, s.Attempts[last].Error = "error", err.Error() })
		return EpisodeResult{}, fmt.Errorf("episode %s: %w", slot, err)
	}
	r.tokens(res.Tokens)
	return res, r.slots.update(slot, func(s *Slot) { s.Attempts[last].Status = "finished"; s.Result = &res })
}

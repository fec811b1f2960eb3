package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/generationfmt"
)

// generationOps serializes removals and retries of generations, so that
// a retry never queues a job whose folder a removal is renaming away. (A
// job retry through /v1/jobs between a removal's check and its rename is
// not covered: the retried job then starts the generation afresh.)
var generationOps sync.Mutex

// removeGeneration deletes generations/<g> and unregisters the models its
// job registered as generation g. It is refused (409 naming the job)
// while that job is queued or running.
func (s *Server) removeGeneration(w http.ResponseWriter, r *http.Request) error {
	g, err := generationNumber(r)
	if err != nil {
		return err
	}
	generationOps.Lock()
	defer generationOps.Unlock()
	dir, owner, err := s.generationOwner(r.Context(), g)
	if err != nil {
		return err
	}
	if owner.ID != "" && !api.Terminal(owner.State) {
		return fmt.Errorf("generation %d belongs to %s job %s, which is %s; cancel it first (massctl job cancel %s): %w",
			g, owner.Kind, owner.ID, owner.State, owner.ID, api.ErrConflict)
	}
	if err := generationfmt.RemoveDir(dir); err != nil {
		return err
	}
	out := api.GenerationRemoval{Generation: g, Dir: dir, Job: owner.ID, Models: []string{}}
	if owner.ID != "" {
		if out.Models, err = s.o.Store.RemoveModels(r.Context(), owner.ID, g); err != nil {
			return err
		}
		if s.o.UnregisterModels != nil {
			s.o.UnregisterModels(out.Models)
		}
	}
	s.log.Info("generation removed", "generation", g, "job", owner.ID, "models", out.Models)
	return writeJSON(w, http.StatusOK, out)
}

// retryGeneration queues generation g's failed job again; the generation
// resumes from its last finished stage.
func (s *Server) retryGeneration(w http.ResponseWriter, r *http.Request) error {
	g, err := generationNumber(r)
	if err != nil {
		return err
	}
	generationOps.Lock()
	defer generationOps.Unlock()
	_, owner, err := s.generationOwner(r.Context(), g)
	if err != nil {
		return err
	}
	if owner.ID == "" {
		return fmt.Errorf("generation %d names no job that made it; remove it (massctl generation rm %d): %w", g, g, api.ErrConflict)
	}
	j, err := s.o.Jobs.Retry(r.Context(), owner.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, j)
}

// generationOwner returns generation g's directory and the job that
// claimed it (zero when none did, or when the store no longer has it).
func (s *Server) generationOwner(ctx context.Context, g int) (string, api.Job, error) {
	dir := s.o.Layout.Generation(strconv.Itoa(g))
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", api.Job{}, fmt.Errorf("generation %d: %w", g, api.ErrNotFound)
	}
	if err != nil {
		return "", api.Job{}, fmt.Errorf("generation %d: %w", g, err)
	}
	if !fi.IsDir() {
		return "", api.Job{}, fmt.Errorf("generation %d: %s is not a directory", g, dir)
	}
	id, ok, err := generationfmt.ReadOwner(dir)
	if err != nil || !ok {
		return dir, api.Job{}, err
	}
	j, err := s.o.Store.Job(ctx, id)
	if errors.Is(err, api.ErrNotFound) {
		return dir, api.Job{ID: id, State: api.StateFailed}, nil
	}
	return dir, j, err
}

func generationNumber(r *http.Request) (int, error) {
	g, err := strconv.Atoi(r.PathValue("g"))
	if err != nil || g < 1 || strconv.Itoa(g) != r.PathValue("g") {
		return 0, fmt.Errorf("generation %q: a generation is a number from 1: %w", r.PathValue("g"), api.ErrInvalid)
	}
	return g, nil
}

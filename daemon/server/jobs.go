package server

import (
	"encoding/json"
	"net/http"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
)

// MaxEventsPage caps the events one non-streaming request returns.
const MaxEventsPage = 10000

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := queryInt(r, "limit")
	if err != nil {
		return err
	}
	js, err := s.o.Store.Jobs(r.Context(), store.JobFilter{State: q.Get("state"), Kind: q.Get("kind"), TaskID: q.Get("task"), Limit: int(limit)})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, js)
}

func (s *Server) submitJob(w http.ResponseWriter, r *http.Request) error {
	var req api.JobRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return err
	}
	j, err := s.o.Jobs.Submit(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, j)
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.o.Store.Job(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, j)
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.o.Jobs.Cancel(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, j)
}

func (s *Server) retryJob(w http.ResponseWriter, r *http.Request) error {
	j, err := s.o.Jobs.Retry(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, j)
}

// jobEvents returns the events after ?after=N (at most ?limit=, default and
// maximum MaxEventsPage) as a JSON array, or with
// ?follow=1 streams JSON lines (api.StreamItem): events as they are
// recorded and a job snapshot whenever state or progress changes, ending
// once the job reaches a final state and every event was sent.
func (s *Server) jobEvents(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	after, err := queryInt(r, "after")
	if err != nil {
		return err
	}
	if _, err := s.o.Store.Job(ctx, id); err != nil {
		return err
	}
	if f := r.URL.Query().Get("follow"); f != "1" && f != "true" {
		limit, err := queryInt(r, "limit")
		if err != nil {
			return err
		}
		if limit <= 0 || limit > MaxEventsPage {
			limit = MaxEventsPage
		}
		evs, err := s.o.Store.Events(ctx, id, after, int(limit))
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, evs)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	// Headers are sent: a failure ends the stream, which the client sees.
	_ = s.o.Jobs.Follow(ctx, id, after, func(items []api.StreamItem) error {
		for i := range items {
			if err := enc.Encode(items[i]); err != nil {
				return err
			}
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	})
	return nil
}

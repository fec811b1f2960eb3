package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// apiSource reads an episode's files through massd's API for the audit.
type apiSource struct {
	cl      *client.Client
	episode string
}

var _ audit.Source = apiSource{}

func (s apiSource) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	rc, err := s.cl.EpisodeFile(ctx, s.episode, name)
	if errors.Is(err, api.ErrNotFound) {
		return nil, fmt.Errorf("episode %s file %s: %w", s.episode, name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("episode %s file %s: %w", s.episode, name, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("episode %s file %s: larger than %d bytes", s.episode, name, max)
	}
	return b, nil
}

// auditPage computes the behavioural audit from the ledger massd serves and
// shows its counters, the handoff graph (inline SVG) and the guards.
func (c *Console) auditPage(ctx context.Context, r *http.Request) (view, error) {
	id := r.PathValue("id")
	in, err := audit.Load(ctx, apiSource{cl: c.cl, episode: id}, id)
	if err != nil {
		return view{}, err
	}
	rep := audit.Compute(in)
	var svg bytes.Buffer
	if err := audit.WriteGraphSVG(&svg, rep); err != nil {
		return view{}, err
	}
	// The SVG comes from html/template, which escaped every label.
	return view{name: "audit", title: "audit of " + id,
		data: map[string]any{"ID": id, "R": rep, "Graph": template.HTML(svg.String())}}, nil
}

package kubernetes

import (
	"context"
	"errors"
	"fmt"

	"github.com/mass-dev/mass/sandbox"
)

// List returns this daemon's pods and workspaces, of one episode or all.
// Each keeper stands for its workspace too (Kind "volume"), as the Docker
// backend lists its keeper container and its volume.
func (r *Runtime) List(ctx context.Context, episode string) ([]sandbox.Info, error) {
	if episode != "" && !validID(episode) {
		return nil, fmt.Errorf("list: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	pods, err := r.listPods(ctx, episode, "")
	if err != nil {
		return nil, err
	}
	var out []sandbox.Info
	for _, p := range pods {
		agent := p.Labels[LabelAgent]
		if agent == keeperLabel {
			agent = keeperAgent
		}
		in := sandbox.Info{ID: p.Name, Kind: "container", Episode: p.Labels[LabelEpisode], Agent: agent,
			Daemon: p.Labels[LabelDaemon], State: string(p.Status.Phase), Created: p.CreationTimestamp.Time}
		out = append(out, in)
		if p.Labels[LabelKind] == kindWorkspace {
			in.ID, in.Kind, in.State = r.wsDir(in.Episode), "volume", "present"
			out = append(out, in)
		}
	}
	return out, nil
}

// KillEpisode deletes the episode's agent pods (grace 0) and waits until
// they are gone; the keeper and the workspace stay for export.
func (r *Runtime) KillEpisode(ctx context.Context, episode string) error {
	if !validID(episode) {
		return fmt.Errorf("kill episode: id %q: %w", episode, sandbox.ErrInvalid)
	}
	return r.deleteEpisodePods(ctx, episode, kindAgent)
}

// ReapOrphans removes the pods and workspaces of this daemon whose episode
// is not live; it returns how many objects it removed.
func (r *Runtime) ReapOrphans(ctx context.Context, live func(episode string) bool) (int, error) {
	infos, err := r.List(ctx, "")
	if err != nil {
		return 0, err
	}
	dead := map[string]bool{}
	n := 0
	for _, in := range infos {
		if in.Episode == "" || live(in.Episode) {
			continue
		}
		dead[in.Episode] = true
		n++
	}
	var errs []error
	for ep := range dead {
		if err := r.RemoveWorkspace(ctx, ep); err != nil {
			errs = append(errs, err)
		}
	}
	if len(dead) > 0 {
		r.log.Info("reaped orphans", "objects", n, "episodes", len(dead))
	}
	return n, errors.Join(errs...)
}

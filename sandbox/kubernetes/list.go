package kubernetes

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
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
		agent := p.Labels[boxhost.LabelAgent]
		if agent == keeperLabel {
			agent = keeperAgent
		}
		in := sandbox.Info{ID: p.Name, Kind: "container", Episode: p.Labels[boxhost.LabelEpisode], Agent: agent,
			Daemon: p.Labels[boxhost.LabelDaemon], State: string(p.Status.Phase), Created: p.CreationTimestamp.Time}
		out = append(out, in)
		if p.Labels[boxhost.LabelKind] == kindWorkspace {
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
	return boxhost.Reap(ctx, r, live, r.log)
}

package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

func isNotFound(err error) bool {
	return err != nil && (cerrdefs.IsNotFound(err))
}

func (r *Runtime) filter(episode, kind string) filters.Args {
	f := filters.NewArgs(filters.Arg("label", LabelDaemon+"="+r.cfg.DaemonID))
	if episode != "" {
		f.Add("label", LabelEpisode+"="+episode)
	}
	if kind != "" {
		f.Add("label", LabelKind+"="+kind)
	}
	return f
}

// List returns this daemon's containers and volumes, of one episode or all.
func (r *Runtime) List(ctx context.Context, episode string) ([]sandbox.Info, error) {
	if episode != "" && !sandbox.ValidID(episode) {
		return nil, fmt.Errorf("list: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	cs, err := r.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: r.filter(episode, "")})
	if err != nil {
		return nil, wrapErr("list containers", err)
	}
	var out []sandbox.Info
	for _, c := range cs {
		out = append(out, sandbox.Info{ID: c.ID, Kind: "container", Episode: c.Labels[LabelEpisode],
			Agent: c.Labels[LabelAgent], Daemon: c.Labels[LabelDaemon], State: string(c.State),
			Created: time.Unix(c.Created, 0)})
	}
	vs, err := r.cli.VolumeList(ctx, volume.ListOptions{Filters: r.filter(episode, "")})
	if err != nil {
		return nil, wrapErr("list volumes", err)
	}
	nets, err := r.egressNetworks(ctx, r.filter(episode, ""))
	if err != nil {
		return nil, err
	}
	out = append(out, nets...)
	for _, v := range vs.Volumes {
		created, _ := time.Parse(time.RFC3339, v.CreatedAt)
		out = append(out, sandbox.Info{ID: v.Name, Kind: "volume", Episode: v.Labels[LabelEpisode],
			Agent: v.Labels[LabelAgent], Daemon: v.Labels[LabelDaemon], State: "present", Created: created})
	}
	return out, nil
}

// KillEpisode force-removes the episode's agent containers in parallel
// (SIGKILL, then removal). The workspace and its keeper stay for export;
// RemoveWorkspace removes them.
func (r *Runtime) KillEpisode(ctx context.Context, episode string) error {
	if !sandbox.ValidID(episode) {
		return fmt.Errorf("kill episode: id %q: %w", episode, sandbox.ErrInvalid)
	}
	return errors.Join(r.removeContainers(ctx, episode, kindAgent), r.stopEgress(ctx, episode))
}

func (r *Runtime) removeContainers(ctx context.Context, episode, kind string) error {
	cs, err := r.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: r.filter(episode, kind)})
	if err != nil {
		return wrapErr("list containers of "+episode, err)
	}
	return boxhost.Parallel(cs, func(c container.Summary) error {
		// Any container may be a gVisor one: the runsc fallback only ever
		// kills runsc processes naming this container.
		return r.forceRemove(ctx, c.ID, sandbox.RuntimeRunsc)
	})
}

func isRemovalInProgress(err error) bool {
	return cerrdefs.IsConflict(err)
}

// ReapOrphans removes this daemon's containers and volumes whose episode is
// not live; it returns how many objects it removed.
func (r *Runtime) ReapOrphans(ctx context.Context, live func(episode string) bool) (int, error) {
	return boxhost.Reap(ctx, r, live, r.log)
}

package boxhost

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/mass-dev/mass/sandbox"
)

// Labels on every object a backend makes (container, volume, pod); List,
// KillEpisode and ReapOrphans select by them.
const (
	LabelDaemon  = "mass.daemon"
	LabelEpisode = "mass.episode"
	LabelAgent   = "mass.agent"
	LabelKind    = "mass.kind" // KindAgent or KindWorkspace

	KindAgent     = "agent"
	KindWorkspace = "workspace"
	// KeeperAgent is the agent name of an episode's workspace keeper.
	KeeperAgent = "_workspace"
)

// Labels are the labels of one object of daemon.
func Labels(daemon, episode, agent, kind string) map[string]string {
	return map[string]string{LabelDaemon: daemon, LabelEpisode: episode, LabelAgent: agent, LabelKind: kind}
}

// Reap removes the workspace (and with it every object) of each episode
// that rt lists and live does not know; it returns how many listed
// objects belonged to such episodes.
func Reap(ctx context.Context, rt sandbox.Runtime, live func(episode string) bool, log *slog.Logger) (int, error) {
	infos, err := rt.List(ctx, "")
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
		if !sandbox.ValidID(ep) {
			continue
		}
		if err := rt.RemoveWorkspace(ctx, ep); err != nil {
			errs = append(errs, err)
		}
	}
	if len(dead) > 0 {
		log.Info("reaped orphans", "objects", n, "episodes", len(dead))
	}
	return n, errors.Join(errs...)
}

// Parallel runs fn on every item at once and joins their errors.
func Parallel[T any](items []T, fn func(T) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(items))
	for i, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(it)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

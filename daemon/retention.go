package daemon

import (
	"context"
	"time"

	"github.com/mass-dev/mass/daemon/catalog"
	"github.com/mass-dev/mass/daemon/config"
)

// startRetention applies the retention setting at start and then every
// config.DefaultRetentionEvery until ctx ends: old episodes lose their
// exported workspace, never their record.
func (d *Daemon) startRetention(ctx context.Context) {
	r := d.o.Config.Retention
	if !r.Enabled() {
		return
	}
	keep, _ := r.KeepFor() // validated with the config
	rt := catalog.Retention{KeepFor: keep, KeepLast: r.KeepLast}
	log := d.log.With("component", "retention")
	prune := func() {
		ids, err := d.tasks.PruneWorkspaces(ctx, rt, time.Now())
		if err != nil {
			log.Warn("prune workspaces", "err", err)
		} else if len(ids) > 0 {
			log.Info("pruned old episodes' workspaces (records kept)", "episodes", len(ids))
		}
	}
	go func() {
		prune()
		t := time.NewTicker(config.DefaultRetentionEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				prune()
			}
		}
	}()
}

package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Retention says how long finished episodes keep their exported workspace
// (workspace.tar). Records, trajectories, ledgers and manifests are never
// pruned; `massctl episode rm --purge` removes an episode whole. Unset
// keeps every workspace.
type Retention struct {
	// KeepWorkspaces keeps the workspaces of episodes updated within this
	// long: a Go duration ("72h") or whole days ("30d").
	KeepWorkspaces string `yaml:"keep_workspaces"`
	// KeepLast keeps the workspaces of the newest N episodes whatever their age.
	KeepLast int `yaml:"keep_last"`
}

// DefaultRetentionEvery is how often massd applies the retention setting.
const DefaultRetentionEvery = time.Hour

// KeepFor parses KeepWorkspaces; 0 when unset.
func (r Retention) KeepFor() (time.Duration, error) {
	s := strings.TrimSpace(r.KeepWorkspaces)
	if s == "" {
		return 0, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 100*365 {
			return 0, fmt.Errorf("%q is not a number of days from 1, e.g. 30d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < time.Minute {
		return 0, fmt.Errorf("%q is not a duration of a minute or more, e.g. 30d or 72h", s)
	}
	return d, nil
}

// Enabled reports whether any workspace is ever pruned.
func (r Retention) Enabled() bool {
	d, err := r.KeepFor()
	return err == nil && (d > 0 || r.KeepLast > 0)
}

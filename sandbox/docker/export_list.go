package docker

import (
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// keeperList lists a workspace directory in the keeper (root with
// DAC_READ_SEARCH, so a directory the agent made unreadable is listed).
func (r *Runtime) keeperList(ctx context.Context, episode, dir string) ([]string, error) {
	p := path.Join(sandbox.WorkspaceMount, dir)
	res, err := r.execRaw(ctx, keeperName(episode), execOpts{argv: []string{HelperMount, "ls", p}, user: "0",
		maxBytes: 64 << 20, hostTimeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("list %s: exit %d: %s: %w", p, res.ExitCode, strings.TrimSpace(string(res.Stderr)), io.ErrUnexpectedEOF)
	}
	out := strings.Split(string(res.Stdout), "\x00")
	return out[:len(out)-1], nil
}

// sparseOver is the episode workspace's size cap (its tmpfs size, else the
// policy's disk cap): no file of the workspace holds more data than that.
func (r *Runtime) sparseOver(ctx context.Context, episode string) int64 {
	if vol, err := r.cli.VolumeInspect(ctx, volumeName(episode)); err == nil {
		if n := tmpfsVolumeBytes(vol.Options); n > 0 {
			return n
		}
	}
	return r.cfg.Policy.DiskBytes
}

// checkDeepDirs replaces the note on each directory deep enough for the
// engine to have dropped entries below it by what the keeper's listing
// shows: the entries actually missing, or no note when none is.
func (r *Runtime) checkDeepDirs(ctx context.Context, episode string, x *boxhost.Exporter) {
	have := map[string]bool{}
	for _, f := range x.Out {
		have[f.Path] = true
	}
	for _, l := range x.Links {
		have[l.Name] = true
	}
	for i, f := range x.Out {
		if f.Type != "dir" || f.Omitted == "" {
			continue
		}
		names, err := r.keeperList(ctx, episode, f.Path)
		if err != nil {
			continue // keep the note: entries below it may be missing
		}
		var missing []string
		for _, n := range names {
			if !have[f.Path+"/"+n] {
				missing = append(missing, n)
			}
		}
		x.Out[i].Omitted = ""
		if len(missing) > 0 {
			x.Out[i].Omitted = fmt.Sprintf("%d entries below this directory (first %q) have paths past PATH_MAX (%d bytes) "+
				"and are missing from the export (the engine's archive skips them without an error)", len(missing), missing[0], boxhost.PathMax)
		}
	}
}

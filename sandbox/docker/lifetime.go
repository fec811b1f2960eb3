package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
)

// Bounds on the engine calls that start and remove containers. An OCI
// runtime that cannot start a container (runsc under too small a pids
// limit, say) must fail the call with its reason, not hold it forever.
const (
	startTimeout  = 90 * time.Second
	removeTimeout = 30 * time.Second
)

// startContainer starts a created container within startTimeout; on any
// failure it removes the container (bounded too) and returns the engine's
// reason, naming the runtime.
func (r *Runtime) startContainer(ctx context.Context, id, runtime, what string) error {
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	err := r.cli.ContainerStart(sctx, id, container.StartOptions{})
	timedOut := sctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err == nil {
		return nil
	}
	rmErr := r.forceRemove(context.WithoutCancel(ctx), id, runtime)
	if timedOut {
		err = fmt.Errorf("the %s runtime did not start it within %s: %w", runtime, startTimeout, errors.Join(err, sandbox.ErrTimeout))
	} else {
		err = fmt.Errorf("runtime %s: %w", runtime, err)
	}
	if rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	return wrapErr(what, err)
}

// forceRemove is `docker rm -f` within removeTimeout; a removal already
// under way is waited for (awaitRemoved), since the container holds its
// volumes until it is gone. Under runsc, where a
// sandbox that never started can hold the removal indefinitely, the
// container's runsc processes are killed from the host and the removal
// tried once more.
func (r *Runtime) forceRemove(ctx context.Context, id, runtime string) error {
	rm := func() error {
		rctx, cancel := context.WithTimeout(ctx, removeTimeout)
		defer cancel()
		err := r.cli.ContainerRemove(rctx, id, container.RemoveOptions{Force: true})
		switch {
		case err == nil || isNotFound(err):
			return nil
		case isRemovalInProgress(err):
			// Another removal is under way (one whose caller gave up, or
			// a killed massd's): the container is not gone yet, and until
			// it is it holds the workspace volume, so wait for it.
			return r.awaitRemoved(rctx, id)
		}
		return err
	}
	err := rm()
	if err == nil || runtime != sandbox.RuntimeRunsc {
		return wrapErr("remove container "+short(id), err)
	}
	n := killRunscProcesses(id)
	r.log.Warn("runsc container did not go away; killed its runsc processes", "container", short(id), "killed", n, "err", err)
	if err2 := rm(); err2 != nil {
		return wrapErr("remove container "+short(id), errors.Join(err, err2))
	}
	return nil
}

// awaitRemoved waits until the engine no longer knows container id.
func (r *Runtime) awaitRemoved(ctx context.Context, id string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := r.cli.ContainerInspect(ctx, id)
		if isNotFound(err) {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("container %s is still being removed: %w", short(id), ctx.Err())
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// killRunscProcesses SIGKILLs every host process of runsc (sandbox, gofer,
// exec) whose command line names the container; it returns how many.
func killRunscProcesses(id string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(id)) {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmd), "\x00")
		if !strings.Contains(filepath.Base(argv0), "runsc") {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}

package docker

import (
	"context"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// A removal of the keeper already under way (one whose caller gave up, or
// a killed massd's) is not the keeper gone: RemoveWorkspace waits for it
// and then removes the volume. On 009d257 it took the engine's "removal
// already in progress" for done, the volume removal failed as in use, and
// the volume was left (TestChaosKillNine, once, under load).
func TestRemoveWorkspaceDuringAnotherRemoval(t *testing.T) {
	rt := needEngine(t)
	ctx := context.Background()
	raced := 0
	for range 5 {
		ep := sandboxtest.Episode(t)
		if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := rt.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: rt.filter(ep, "")})
		if err != nil || len(cs) != 1 {
			t.Fatalf("containers of %s: %d, %v; want its keeper", ep, len(cs), err)
		}
		other := make(chan error, 1)
		go func() { other <- rt.cli.ContainerRemove(ctx, cs[0].ID, container.RemoveOptions{Force: true}) }()
		// Start ours once the engine is removing the keeper.
		for {
			c, err := rt.cli.ContainerInspect(ctx, cs[0].ID)
			if err != nil { // gone already: no race this time
				break
			}
			if c.State.Status == "removing" {
				raced++
				break
			}
		}
		if err := rt.RemoveWorkspace(ctx, ep); err != nil {
			t.Errorf("remove workspace of %s while the keeper is being removed: %v", ep, err)
		}
		if err := <-other; err != nil && !isNotFound(err) && !isRemovalInProgress(err) {
			t.Errorf("the other removal: %v", err)
		}
		if left, err := rt.List(ctx, ep); err != nil || len(left) != 0 {
			t.Errorf("left of %s: %+v (%v)", ep, left, err)
		}
	}
	t.Logf("%d of 5 removals started while the engine was removing the keeper", raced)
	if raced == 0 {
		t.Error("no removal started while the keeper was being removed; the test proved nothing")
	}
}

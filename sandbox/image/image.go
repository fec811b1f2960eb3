// Package image builds the container images mass runs agents in, offline and
// without a registry: a tiny busybox test image and the Debian agent image.
// Each build is keyed by a content hash of its recipe, stored as a label, so a
// build only happens when the recipe changed.
package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
)

// Image references and labels.
const (
	TestRef  = "mass-test:latest"
	AgentRef = "mass-agent:latest"

	// LabelHash holds the content hash of the recipe an image was built from.
	LabelHash = "dev.mass.image.hash"
	// LabelRecipe names the recipe ("test" or "agent").
	LabelRecipe = "dev.mass.image.recipe"
	// LabelManifest holds the sha256 of the package manifest inside the image.
	LabelManifest = "dev.mass.image.manifest-sha256"
	// ManifestPath is where the agent image keeps its package list.
	ManifestPath = "/usr/share/mass/manifest.txt"
)

// Engine is the part of the Docker client the builders use; *client.Client
// satisfies it.
type Engine interface {
	ImageInspect(ctx context.Context, ref string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageImport(ctx context.Context, src image.ImportSource, ref string, opts image.ImportOptions) (io.ReadCloser, error)
	ImageTag(ctx context.Context, source, target string) error
	ImageRemove(ctx context.Context, ref string, opts image.RemoveOptions) ([]image.DeleteResponse, error)
}

var _ Engine = (*client.Client)(nil)

// Result says what Ensure did.
type Result struct {
	Ref   string `json:"ref"`
	ID    string `json:"id"`
	Hash  string `json:"hash"`
	Built bool   `json:"built"` // false when an image with the same hash existed
}

// currentHash returns the recipe hash label of ref, or "" when ref is absent.
func currentHash(ctx context.Context, e Engine, ref string) (string, string, error) {
	info, err := e.ImageInspect(ctx, ref)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", "", nil
		}
		return "", "", fmt.Errorf("inspect image %s: %w", ref, err)
	}
	if info.Config == nil {
		return "", info.ID, nil
	}
	return info.Config.Labels[LabelHash], info.ID, nil
}

// importTar sends a root filesystem tar to the engine as ref, applying the
// Dockerfile-style changes, and returns the new image id.
func importTar(ctx context.Context, e Engine, rootfs io.Reader, ref string, changes []string) (string, error) {
	rc, err := e.ImageImport(ctx, image.ImportSource{Source: rootfs, SourceName: "-"}, ref, image.ImportOptions{Changes: changes})
	if err != nil {
		return "", fmt.Errorf("import image %s: %w", ref, err)
	}
	defer rc.Close()
	if err := readStream(rc); err != nil {
		return "", fmt.Errorf("import image %s: %w", ref, err)
	}
	info, err := e.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("inspect imported image %s: %w", ref, err)
	}
	return info.ID, nil
}

// dropOld removes the image a rebuild replaced. It is best effort: an image
// still used by a container stays until that container is gone.
func dropOld(ctx context.Context, e Engine, oldID, newID string) {
	if oldID == "" || oldID == newID {
		return
	}
	_, _ = e.ImageRemove(ctx, oldID, image.RemoveOptions{PruneChildren: true})
}

// streamMessage is one line of the engine's JSON progress stream.
type streamMessage struct {
	Status      string `json:"status"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

// readStream drains a progress stream and returns the first error it reports.
func readStream(r io.Reader) error {
	dec := json.NewDecoder(r)
	for {
		var m streamMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read engine stream: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return errors.New(m.ErrorDetail.Message)
		}
		if m.Error != "" {
			return errors.New(m.Error)
		}
	}
}

// labelChanges renders labels as import changes in a stable order.
func labelChanges(labels [][2]string) []string {
	out := make([]string, 0, len(labels))
	for _, kv := range labels {
		out = append(out, fmt.Sprintf("LABEL %s=%s", kv[0], quoteLabel(kv[1])))
	}
	return out
}

func quoteLabel(v string) string {
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}

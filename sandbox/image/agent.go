package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Agent image defaults.
const (
	DefaultMirror = "http://deb.debian.org/debian"
	DefaultSuite  = "bookworm"

	agentRecipeVersion = "mass-agent-image/1"
)

// DefaultPackages are installed on top of debootstrap's minbase.
var DefaultPackages = []string{
	"python3", "python3-numpy", "python3-pandas", "python3-scipy",
	"python3-matplotlib", "python3-sklearn",
	"procps", // ps, top, free: the usability probes run `ps -e`
}

// agentEnv is the environment baked into the agent image. HOME and the
// matplotlib cache point at /tmp because the root filesystem is read-only.
var agentEnv = []string{
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"LANG=C.UTF-8",
	"HOME=/tmp",
	"MPLBACKEND=Agg",
	"MPLCONFIGDIR=/tmp/.matplotlib",
	"PYTHONDONTWRITEBYTECODE=1",
}

// AgentOptions configure the agent image build.
type AgentOptions struct {
	Ref         string    // image reference; AgentRef when empty
	Mirror      string    // Debian archive; DefaultMirror when empty
	Suite       string    // DefaultSuite when empty
	Packages    []string  // DefaultPackages when nil
	WorkDir     string    // where the root filesystem is assembled; os.TempDir() when empty
	Debootstrap string    // path of debootstrap; looked up in PATH when empty
	Progress    io.Writer // build log; discarded when nil
	Force       bool      // rebuild even when the hash matches
	// Env is baked into the image (KEY=VALUE); the base profile's when nil.
	Env []string

	recipe string // LabelRecipe; "agent" when empty (BuildProfile sets it)
}

func (o *AgentOptions) defaults() {
	if o.Ref == "" {
		o.Ref = AgentRef
	}
	if o.Mirror == "" {
		o.Mirror = DefaultMirror
	}
	if o.Suite == "" {
		o.Suite = DefaultSuite
	}
	if o.Packages == nil {
		o.Packages = DefaultPackages
	}
	if o.WorkDir == "" {
		o.WorkDir = os.TempDir()
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Env == nil {
		o.Env = agentEnv
	}
	if o.recipe == "" {
		o.recipe = "agent"
	}
}

// AgentHash is the content hash of the agent recipe: everything that decides
// what the image holds, in a canonical order.
func AgentHash(o AgentOptions) string {
	o.defaults()
	pkgs := append([]string(nil), o.Packages...)
	sort.Strings(pkgs)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nvariant=minbase\nsuite=%s\nmirror=%s\npackages=%s\n",
		agentRecipeVersion, o.Suite, o.Mirror, strings.Join(pkgs, ","))
	for _, e := range o.Env {
		fmt.Fprintf(&b, "env=%s\n", e)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// HashTag is the second tag of an image built from a recipe with hash:
// the repository of ref and the hash's first 12 hex digits.
func HashTag(ref, hash string) string {
	repo, _, _ := strings.Cut(ref, ":")
	return repo + ":" + hash[:12]
}

// AgentResult is what BuildAgent did.
type AgentResult struct {
	Result
	Tags     []string  `json:"tags"`
	Packages []Package `json:"packages,omitempty"` // manifest; empty when nothing was built
}

// BuildAgent builds o.Ref (mass-agent:latest) and REPO:<hash> with
// debootstrap unless an image with the same recipe hash exists. It needs
// root. BuildProfile builds the other profiles through it.
func BuildAgent(ctx context.Context, e Engine, o AgentOptions) (AgentResult, error) {
	o.defaults()
	hash := AgentHash(o)
	tags := []string{o.Ref, HashTag(o.Ref, hash)}
	have, id, err := currentHash(ctx, e, o.Ref)
	if err != nil {
		return AgentResult{}, err
	}
	if have == hash && !o.Force {
		fmt.Fprintf(o.Progress, "image %s is up to date (hash %s)\n", o.Ref, hash[:12])
		return AgentResult{Result: Result{Ref: o.Ref, ID: id, Hash: hash}, Tags: tags}, nil
	}
	if os.Geteuid() != 0 {
		return AgentResult{}, fmt.Errorf("build image %s: debootstrap needs root; run `sudo massctl image build --profile NAME`", o.Ref)
	}
	deboot := o.Debootstrap
	if deboot == "" {
		if deboot, err = exec.LookPath("debootstrap"); err != nil {
			return AgentResult{}, fmt.Errorf("build agent image: debootstrap not found; install it with `apt-get install debootstrap`")
		}
	}
	work, err := os.MkdirTemp(o.WorkDir, "mass-agent-rootfs-")
	if err != nil {
		return AgentResult{}, fmt.Errorf("make build dir: %w", err)
	}
	root := filepath.Join(work, "root")
	defer cleanupRoot(work, o.Progress)

	fmt.Fprintf(o.Progress, "[1/4] debootstrap --variant=minbase %s from %s (+%s)\n", o.Suite, o.Mirror, strings.Join(o.Packages, " "))
	cmd := exec.CommandContext(ctx, deboot, "--variant=minbase", "--components=main",
		"--include="+strings.Join(o.Packages, ","), o.Suite, root, o.Mirror)
	cmd.Stdout, cmd.Stderr = o.Progress, o.Progress
	if err := cmd.Run(); err != nil {
		return AgentResult{}, fmt.Errorf("debootstrap %s: %w (see the log above)", o.Suite, err)
	}

	fmt.Fprintf(o.Progress, "[2/4] writing manifest and trimming caches\n")
	pkgs, manifestSum, err := finishRoot(root)
	if err != nil {
		return AgentResult{}, err
	}
	fmt.Fprintf(o.Progress, "      %d packages, manifest sha256 %s\n", len(pkgs), manifestSum[:12])

	fmt.Fprintf(o.Progress, "[3/4] docker import as %s\n", strings.Join(tags, ", "))
	changes := append(labelChanges([][2]string{
		{LabelHash, hash}, {LabelRecipe, o.recipe}, {LabelManifest, manifestSum},
	}), `WORKDIR /workspace`, `CMD ["/bin/bash"]`)
	for _, env := range o.Env {
		changes = append(changes, "ENV "+env)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeDirTar(root, pw)) }()
	newID, err := importTar(ctx, e, pr, o.Ref, changes)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return AgentResult{}, err
	}
	for _, t := range tags[1:] {
		if err := e.ImageTag(ctx, newID, t); err != nil {
			return AgentResult{}, fmt.Errorf("tag %s: %w", t, err)
		}
	}
	dropOld(ctx, e, id, newID)
	fmt.Fprintf(o.Progress, "[4/4] done: %s (%s)\n", o.Ref, newID)
	return AgentResult{Result: Result{Ref: o.Ref, ID: newID, Hash: hash, Built: true}, Tags: tags, Packages: pkgs}, nil
}

// finishRoot writes the package manifest, the workspace directory and drops
// apt caches; it returns the packages and the manifest's sha256.
func finishRoot(root string) ([]Package, string, error) {
	status, err := os.ReadFile(filepath.Join(root, "var/lib/dpkg/status"))
	if err != nil {
		return nil, "", fmt.Errorf("read dpkg status: %w", err)
	}
	pkgs, err := ParseDpkgStatus(status)
	if err != nil {
		return nil, "", err
	}
	manifest := FormatManifest(pkgs)
	mpath := filepath.Join(root, ManifestPath)
	if err := os.MkdirAll(filepath.Dir(mpath), 0o755); err != nil {
		return nil, "", fmt.Errorf("make manifest dir: %w", err)
	}
	if err := os.WriteFile(mpath, manifest, 0o644); err != nil {
		return nil, "", fmt.Errorf("write manifest: %w", err)
	}
	ws := filepath.Join(root, "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, "", fmt.Errorf("make workspace dir: %w", err)
	}
	if err := os.Chown(ws, 65534, 65534); err != nil {
		return nil, "", fmt.Errorf("chown workspace dir: %w", err)
	}
	for _, dir := range []string{"var/cache/apt/archives", "var/lib/apt/lists"} {
		matches, _ := filepath.Glob(filepath.Join(root, dir, "*"))
		for _, m := range matches {
			if fi, err := os.Lstat(m); err == nil && !fi.IsDir() {
				os.Remove(m)
			}
		}
	}
	sum := sha256.Sum256(manifest)
	return pkgs, hex.EncodeToString(sum[:]), nil
}

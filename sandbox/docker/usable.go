package docker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/usable"
)

// usableCheckTimeout bounds one usability run (a box, the commands, cleanup).
const usableCheckTimeout = 5 * time.Minute

// usableVerdict is what one usability run of a runtime binary and image
// found; passes are cached under usableCacheDir by usableKey.
type usableVerdict struct {
	Runtime string   `json:"runtime"`
	Binary  string   `json:"binary"`
	Image   string   `json:"image"`
	OK      bool     `json:"ok"`
	Failed  []string `json:"failed,omitempty"`
	At      string   `json:"at"`
}

// usableOn decides whether sandbox.RuntimeAuto may pick the OCI runtime
// name: the everyday commands of package usable must exit 0 in a box of it
// running the runtime's default image. It runs them once per runtime
// binary (by its sha256) and image id; a pass is cached. checked is false
// when no run was possible (no image, no binary readable), with why.
func (r *Runtime) usableOn(ctx context.Context, name string) (ok, checked bool, why string) {
	path, err := r.runtimePath(ctx, name)
	if err != nil {
		return true, false, err.Error()
	}
	bin, err := binaryHash(path)
	if err != nil {
		return true, false, fmt.Sprintf("hash the %s binary: %v", name, err)
	}
	img, err := r.cli.ImageInspect(ctx, r.cfg.Image)
	if err != nil {
		return true, false, fmt.Sprintf("image %s: %v", r.cfg.Image, err)
	}
	key := usableKey(bin, img.ID)
	if v, ok := readUsable(key); ok && v.OK {
		return true, true, ""
	}
	start := time.Now()
	// The check runs while New resolves auto: the workspace keeper takes
	// the default policy's runtime, so name it for the check's duration.
	prev := r.cfg.Policy.Runtime
	r.cfg.Policy.Runtime = name
	failed, err := r.runUsable(ctx, name)
	r.cfg.Policy.Runtime = prev
	if err != nil {
		return true, false, err.Error()
	}
	v := usableVerdict{Runtime: name, Binary: bin, Image: img.ID, OK: len(failed) == 0, Failed: failed, At: time.Now().UTC().Format(time.RFC3339)}
	r.log.Info("usability of OCI runtime checked", "runtime", name, "path", path, "sha256", bin, "image", img.ID,
		"ok", v.OK, "failed", len(failed), "took", time.Since(start).Round(time.Millisecond))
	if v.OK {
		writeUsable(key, v)
		return true, true, ""
	}
	return false, true, strings.Join(failed, "; ")
}

// runUsable runs the usability commands in a fresh box of the OCI runtime
// and returns the failed ones ("name: observed").
func (r *Runtime) runUsable(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, usableCheckTimeout)
	defer cancel()
	var b [6]byte
	rand.Read(b[:])
	ep := "usable-" + hex.EncodeToString(b[:])
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), time.Minute)
		defer ccancel()
		if err := r.KillEpisode(cctx, ep); err != nil {
			r.log.Warn("remove usability box", "episode", ep, "err", err)
		}
		if err := r.RemoveWorkspace(cctx, ep); err != nil {
			r.log.Warn("remove usability workspace", "episode", ep, "err", err)
		}
	}()
	pol := r.cfg.Policy
	pol.Runtime = name
	pol.Egress = nil
	if err := r.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep, DiskBytes: 64 << 20}, nil); err != nil {
		return nil, fmt.Errorf("usability check on %s: %w", name, err)
	}
	sb, err := r.Create(ctx, sandbox.Spec{Episode: ep, Agent: "usable", Image: r.cfg.Image, Policy: pol})
	if err != nil {
		return nil, fmt.Errorf("usability check on %s: %w", name, err)
	}
	rs, err := usable.Run(ctx, sb)
	if err != nil {
		return nil, fmt.Errorf("usability check on %s: %w", name, err)
	}
	return usable.Failed(rs), nil
}

// binaryHash is the hex sha256 of the runtime binary at path (looked up in
// $PATH when the engine names it without a directory).
func binaryHash(path string) (string, error) {
	if !filepath.IsAbs(path) {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", err
		}
		path = p
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func usableKey(binHash, imageID string) string {
	s := sha256.Sum256([]byte(usable.Version + "\x00" + binHash + "\x00" + imageID))
	return hex.EncodeToString(s[:16])
}

// UsableCacheEnv names the environment variable that moves the usability
// cache (default: mass/usable under the user's cache directory).
const UsableCacheEnv = "MASS_USABLE_CACHE"

func usableCacheDir() string {
	if d := os.Getenv(UsableCacheEnv); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "mass", "usable")
}

func readUsable(key string) (usableVerdict, bool) {
	var v usableVerdict
	dir := usableCacheDir()
	if dir == "" {
		return v, false
	}
	b, err := os.ReadFile(filepath.Join(dir, key+".json"))
	if err != nil || len(b) > 1<<16 || json.Unmarshal(b, &v) != nil {
		return v, false
	}
	return v, true
}

// writeUsable caches a verdict; a cache that cannot be written only costs
// another run next time.
func writeUsable(key string, v usableVerdict) {
	dir := usableCacheDir()
	if dir == "" || os.MkdirAll(dir, 0o700) != nil {
		return
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	tmp, err := os.CreateTemp(dir, key+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append(b, '\n'))
	if cerr := tmp.Close(); werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), filepath.Join(dir, key+".json")) != nil {
		os.Remove(tmp.Name())
	}
}

package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// DefaultBusybox is where Debian's busybox-static package installs its binary.
const DefaultBusybox = "/bin/busybox"

// testRecipeVersion changes whenever the layout below changes meaning.
const testRecipeVersion = "mass-test-image/1"

// TestOptions configure the test image build.
type TestOptions struct {
	Busybox string // static busybox binary; DefaultBusybox when empty
	Ref     string // image reference; TestRef when empty
	Force   bool   // rebuild even when the hash matches
}

// EnsureTest makes sure mass-test:latest exists and matches the current
// recipe, building it from the host's static busybox when it does not.
func EnsureTest(ctx context.Context, e Engine) (Result, error) {
	return BuildTest(ctx, e, TestOptions{})
}

// BuildTest builds the busybox test image unless an image with the same
// content hash is already tagged (or opts.Force is set).
func BuildTest(ctx context.Context, e Engine, opts TestOptions) (Result, error) {
	if opts.Busybox == "" {
		opts.Busybox = DefaultBusybox
	}
	if opts.Ref == "" {
		opts.Ref = TestRef
	}
	rootfs, err := TestRootfs(opts.Busybox)
	if err != nil {
		return Result{}, err
	}
	sum := sha256.Sum256(append([]byte(testRecipeVersion+"\n"), rootfs...))
	hash := hex.EncodeToString(sum[:])
	have, id, err := currentHash(ctx, e, opts.Ref)
	if err != nil {
		return Result{}, err
	}
	if have == hash && !opts.Force {
		return Result{Ref: opts.Ref, ID: id, Hash: hash}, nil
	}
	changes := append(labelChanges([][2]string{{LabelHash, hash}, {LabelRecipe, "test"}}),
		`ENV PATH=/bin`,
		`WORKDIR /workspace`,
		`CMD ["/bin/sh"]`,
	)
	newID, err := importTar(ctx, e, bytes.NewReader(rootfs), opts.Ref, changes)
	if err != nil {
		return Result{}, err
	}
	dropOld(ctx, e, id, newID)
	id = newID
	return Result{Ref: opts.Ref, ID: id, Hash: hash, Built: true}, nil
}

// TestRootfs returns the deterministic root filesystem tar of the test image:
// the static busybox, one symlink per applet, a passwd with nobody, and the
// directories agents expect (/tmp, /workspace owned by nobody).
func TestRootfs(busybox string) ([]byte, error) {
	if err := checkStatic(busybox); err != nil {
		return nil, err
	}
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return nil, fmt.Errorf("read busybox: %w", err)
	}
	applets, err := busyboxApplets(busybox)
	if err != nil {
		return nil, err
	}
	fs := newFS()
	for _, d := range []string{"bin", "dev", "etc", "proc", "sys", "root"} {
		fs.dir(d, 0o755, 0, 0)
	}
	fs.dir("tmp", 0o1777, 0, 0)
	fs.dir("workspace", 0o755, 65534, 65534)
	fs.file("bin/busybox", 0o755, bin)
	for _, a := range applets {
		if a == "busybox" {
			continue
		}
		fs.symlink("bin/"+a, "busybox")
	}
	fs.file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n"))
	fs.file("etc/group", 0o644, []byte("root:x:0:\nnogroup:x:65534:\n"))
	return fs.tar()
}

// checkStatic refuses a dynamically linked binary, which would not run in
// the otherwise empty image.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("open %s (install busybox-static): %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked; install the busybox-static package", path)
		}
	}
	return nil
}

// busyboxApplets asks the binary which applets it was built with.
func busyboxApplets(busybox string) ([]string, error) {
	out, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("list busybox applets: %w", err)
	}
	var applets []string
	for _, l := range strings.Split(string(out), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.ContainsAny(l, "/ \t") {
			continue
		}
		applets = append(applets, l)
	}
	if len(applets) == 0 {
		return nil, fmt.Errorf("busybox %s lists no applets", busybox)
	}
	return applets, nil
}

package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

// CreateWorkspace waits until the episode's boxes fit in the cluster's
// capacity (capacity.go), then starts the episode's keeper (the scheduler
// picks its node, which the episode's boxes then follow), empties the
// directory, streams the inputs in and applies ownership and protection.
func (r *Runtime) CreateWorkspace(ctx context.Context, ws sandbox.WorkspaceSpec, inputs []sandbox.Input) error {
	if err := boxhost.CheckWorkspace(ws, inputs, validID); err != nil {
		return err
	}
	fresh, err := r.admit(ctx, ws.Episode)
	if err != nil {
		return fmt.Errorf("create workspace %s: %w", ws.Episode, err)
	}
	if err := r.createWorkspace(ctx, ws, inputs); err != nil {
		if fresh {
			r.release(ws.Episode)
		}
		return err
	}
	return nil
}

// createWorkspace is CreateWorkspace without the wait for capacity.
func (r *Runtime) createWorkspace(ctx context.Context, ws sandbox.WorkspaceSpec, inputs []sandbox.Input) (err error) {
	if err := boxhost.CheckWorkspace(ws, inputs, validID); err != nil {
		return err
	}
	pol := boxhost.WorkspacePolicy(r.cfg.Policy, ws)
	keeper, err := r.keeperPod(ws.Episode)
	if err != nil {
		return err
	}
	if _, err := r.startPod(ctx, keeper); err != nil {
		return fmt.Errorf("create workspace %s: %w", ws.Episode, err)
	}
	defer func() {
		if err != nil {
			_ = r.removeWorkspace(context.WithoutCancel(ctx), ws.Episode)
		}
	}()
	// A directory left by a keeper that died before it emptied it must
	// not leak into the new episode.
	if err := r.keeperRun(ctx, ws.Episode, nil, wipeArgv...); err != nil {
		return err
	}
	if len(inputs) > 0 {
		if err := r.untar(ctx, ws.Episode, "inputs", func(w io.Writer) error { return boxhost.WriteInputsTar(w, inputs, pol.DiskBytes) }); err != nil {
			return err
		}
	}
	return r.keeperRun(ctx, ws.Episode, nil, boxhost.PrepareArgv(pol.User, ws.Protected)...)
}

// wipeArgv empties /workspace (hidden names too) with what every image
// has, busybox's included: the keeper holds CAP_DAC_OVERRIDE, so what an
// agent made unreadable goes too.
var wipeArgv = []string{"sh", "-c", "rm -rf -- " + sandbox.WorkspaceMount + "/* " + sandbox.WorkspaceMount + "/.[!.]* " + sandbox.WorkspaceMount + "/..?*"}

// keeperPod is the workspace keeper: root with the four capabilities it
// needs to fill, hand over, export and empty the workspace; no network,
// read-only root, small limits.
func (r *Runtime) keeperPod(episode string) (*corev1.Pod, error) {
	kp := r.cfg.Policy
	kp.CapDrop = []string{"ALL"}
	kp.CapAdd = []string{"CHOWN", "FOWNER", "DAC_READ_SEARCH", "DAC_OVERRIDE"}
	kp.NoNewPrivileges = true
	kp.ReadOnlyRootfs = true
	kp.MemoryBytes = 256 << 20
	kp.NanoCPUs = 500_000_000
	kp.TmpfsBytes = 1 << 20
	class, err := r.runtimeClass(kp.Runtime)
	if err != nil {
		return nil, err
	}
	return r.podSpec(kp, podOpts{name: r.podName(episode, keeperAgent), episode: episode, agent: keeperAgent,
		kind: kindWorkspace, image: r.cfg.Image, runtimeClass: class, user: "0:0",
		command: []string{sandbox.HelperMount, "pause"}})
}

// workspaceNode is the node of the episode's keeper.
func (r *Runtime) workspaceNode(ctx context.Context, episode string) (string, error) {
	p, err := r.cs.CoreV1().Pods(r.cfg.Namespace).Get(ctx, r.podName(episode, keeperAgent), metav1.GetOptions{})
	if err != nil {
		return "", wrapErr("workspace of "+episode+" (call CreateWorkspace first)", err)
	}
	if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
		return "", fmt.Errorf("workspace of %s is being removed: %w", episode, sandbox.ErrNotFound)
	}
	return p.Spec.NodeName, nil
}

// keeperRun runs argv in the keeper and fails unless it exits 0.
func (r *Runtime) keeperRun(ctx context.Context, episode string, stdin io.Reader, argv ...string) error {
	res, err := r.execRaw(ctx, r.podName(episode, keeperAgent), execOpts{argv: argv, stdin: stdin, maxBytes: 64 << 10})
	if err != nil {
		return fmt.Errorf("workspace %s: %s: %w", episode, argv[0], err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("workspace %s: %s exit %d: %q: %w", episode, strings.Join(argv, " "), res.ExitCode, res.Stderr, sandbox.ErrInvalid)
	}
	return nil
}

// untar streams the tar that write produces (what: its name in errors)
// into the keeper's /workspace.
func (r *Runtime) untar(ctx context.Context, episode, what string, write func(io.Writer) error) error {
	pr, pw := io.Pipe()
	var werr error
	go func() { werr = write(pw); pw.CloseWithError(werr) }()
	err := r.keeperRun(ctx, episode, pr, "tar", "-x", "-f", "-", "-C", sandbox.WorkspaceMount)
	pr.Close()
	if werr != nil {
		return fmt.Errorf("workspace %s: %s: %w", episode, what, werr)
	}
	return err
}

// ExportWorkspace streams `tar -c` of /workspace out of the keeper and
// rewrites it as the Docker backend does (boxhost.Exporter): a file larger
// than the workspace's disk cap is left out with a note, the rest fetched
// around it, and each further name of a hard-linked file is a copy.
func (r *Runtime) ExportWorkspace(ctx context.Context, episode string, w io.Writer, maxBytes int64) ([]sandbox.FileInfo, error) {
	if !validID(episode) {
		return nil, fmt.Errorf("export workspace: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	if maxBytes <= 0 {
		maxBytes = boxhost.DefaultExportBytes
	}
	if _, err := r.workspaceNode(ctx, episode); err != nil {
		return nil, fmt.Errorf("export workspace: %w", err)
	}
	// The node does not cap the workspace (Report says so): past the
	// policy's cap a file is sparse or one the cap should have refused.
	x := boxhost.NewExporter(w, maxBytes, r.cfg.Policy.DiskBytes)
	if err := x.Export(ctx, keeperSource{r, r.podName(episode, keeperAgent)}); err != nil {
		return x.Out, fmt.Errorf("export workspace %s: %w", episode, err)
	}
	return x.Out, nil
}

// keeperSource reads a workspace through its keeper: `tar -c` and the
// helper's `ls` over exec streams (boxhost.ExportSource).
type keeperSource struct {
	r      *Runtime
	keeper string
}

// tarDrainBytes bounds what is read after a tar's end-of-archive (its
// record padding) before the stream is cut.
const tarDrainBytes = 1 << 20

func (s keeperSource) Tar(ctx context.Context, rel string, read func(io.Reader) error) error {
	argv := []string{"tar", "-c", "-f", "-", "-C", sandbox.WorkspaceMount, "."}
	if rel != "" {
		argv = []string{"tar", "-c", "-f", "-", "-C", path.Join(sandbox.WorkspaceMount, path.Dir(rel)), "./" + path.Base(rel)}
	}
	pr, pw := io.Pipe()
	xctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		rerr error
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		rerr = read(pr)
		if rerr != nil {
			// The stream ends here: tar may be reading a terabyte of a
			// sparse file's holes, which no one would read on.
			cancel()
		} else {
			_, _ = io.CopyN(io.Discard, pr, tarDrainBytes)
		}
		pr.CloseWithError(errors.Join(rerr, io.ErrClosedPipe))
	}()
	res, err := s.r.execRaw(xctx, s.keeper, execOpts{argv: argv, stdout: pw, maxBytes: 64 << 10})
	pw.CloseWithError(err)
	wg.Wait()
	if rerr != nil {
		// Ending the stream does not end the keeper's tar (an exec's
		// processes outlive their stream under gVisor): kill it.
		kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		_, _ = s.r.execRaw(kctx, s.keeper, execOpts{argv: []string{sandbox.HelperMount, "killall"}, maxBytes: 4096})
		kcancel()
		return rerr
	}
	if err != nil {
		return err
	}
	if res.ExitCode > 1 { // 1: a file changed while it was read
		return fmt.Errorf("tar exit %d: %q: %w", res.ExitCode, res.Stderr, sandbox.ErrUnavailable)
	}
	return nil
}

// List runs the helper's `ls` in the keeper (root with DAC_READ_SEARCH,
// so a directory the agent made unreadable is listed).
func (s keeperSource) List(ctx context.Context, dir string) ([]string, error) {
	p := path.Join(sandbox.WorkspaceMount, dir)
	res, err := s.r.execRaw(ctx, s.keeper, execOpts{argv: []string{sandbox.HelperMount, "ls", p},
		maxBytes: 64 << 20, hostTimeout: time.Minute})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	if res.ExitCode != 0 || res.Truncated {
		return nil, fmt.Errorf("list %s: exit %d: %s: %w", p, res.ExitCode, strings.TrimSpace(string(res.Stderr)), io.ErrUnexpectedEOF)
	}
	out := strings.Split(string(res.Stdout), "\x00")
	return out[:len(out)-1], nil
}

// RemoveWorkspace deletes the episode's agent pods, empties the directory
// through the keeper, then deletes the keeper and frees the episode's
// capacity. An empty directory named after the episode stays on the node.
func (r *Runtime) RemoveWorkspace(ctx context.Context, episode string) error {
	err := r.removeWorkspace(ctx, episode)
	r.release(episode)
	return err
}

func (r *Runtime) removeWorkspace(ctx context.Context, episode string) error {
	if !validID(episode) {
		return fmt.Errorf("remove workspace: episode id %q: %w", episode, sandbox.ErrInvalid)
	}
	if err := r.deleteEpisodePods(ctx, episode, kindAgent); err != nil {
		return err
	}
	var errs []error
	if _, err := r.workspaceNode(ctx, episode); err == nil {
		if err := r.keeperRun(ctx, episode, nil, wipeArgv...); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, r.deleteEpisodePods(ctx, episode, ""))
	return errors.Join(errs...)
}

// deleteEpisodePods deletes the pods of an episode (of one kind, or all)
// in parallel and waits until they are gone.
func (r *Runtime) deleteEpisodePods(ctx context.Context, episode, kind string) error {
	pods, err := r.listPods(ctx, episode, kind)
	if err != nil {
		return err
	}
	return boxhost.Parallel(pods, func(p corev1.Pod) error { return r.deletePod(ctx, p.Name, true) })
}

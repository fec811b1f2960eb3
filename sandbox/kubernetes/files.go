package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// fileOpTimeout bounds one helper call.
const fileOpTimeout = 2 * time.Minute

// files runs each file operation as one `mass-sandbox-helper op` exec in
// the box, as the agent's user: the request on its stdin, the response on
// its stdout. The host never opens a workspace path.
type files struct{ b *box }

var _ sandbox.Files = (*files)(nil)

func (f *files) do(ctx context.Context, req helper.Request) (helper.Response, error) {
	if err := f.b.gone(); err != nil {
		return helper.Response{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return helper.Response{}, fmt.Errorf("encode %s request: %w", req.Op, err)
	}
	if len(body) > helper.MaxRequestBytes {
		return helper.Response{}, fmt.Errorf("%s %s: request of %d bytes: %w", req.Op, req.Path, len(body), sandbox.ErrTooLarge)
	}
	res, err := f.b.r.execRaw(ctx, f.b.pod, execOpts{
		argv:  []string{sandbox.HelperMount, "op"},
		stdin: bytes.NewReader(body), maxBytes: helper.MaxResponseBytes + 1,
		hostTimeout: fileOpTimeout, onAbort: f.b.killAll,
	})
	if err != nil {
		return helper.Response{}, fmt.Errorf("%s %s: %w", req.Op, req.Path, err)
	}
	if res.TimedOut {
		return helper.Response{}, fmt.Errorf("%s %s: helper gave no answer in time: %w", req.Op, req.Path, sandbox.ErrTimeout)
	}
	if res.ExitCode != 0 || res.Truncated {
		return helper.Response{}, fmt.Errorf("%s %s: helper exit %d (truncated %v): %q: %w", req.Op, req.Path, res.ExitCode, res.Truncated, res.Stderr, sandbox.ErrUnavailable)
	}
	resp, err := helper.DecodeResponse(bytes.NewReader(res.Stdout))
	if err != nil {
		return resp, fmt.Errorf("%s %s: %w", req.Op, req.Path, err)
	}
	return resp, nil
}

func (f *files) Read(ctx context.Context, path string, offset, limit int) (sandbox.ReadResult, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpRead, Path: path, Offset: offset, Limit: limit})
	if err != nil || resp.Read == nil {
		return sandbox.ReadResult{}, orMissing(err, "read")
	}
	return *resp.Read, nil
}

func (f *files) Write(ctx context.Context, path string, content []byte) (sandbox.FileChange, error) {
	if len(content) > helper.MaxWriteBytes {
		return sandbox.FileChange{}, fmt.Errorf("write %s: %d bytes over the %d cap: %w", path, len(content), helper.MaxWriteBytes, sandbox.ErrTooLarge)
	}
	resp, err := f.do(ctx, helper.Request{Op: helper.OpWrite, Path: path, Content: content})
	if err != nil || resp.Change == nil {
		return sandbox.FileChange{}, orMissing(err, "write")
	}
	return *resp.Change, nil
}

func (f *files) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (sandbox.FileChange, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpEdit, Path: path, Old: oldString, New: newString, ReplaceAll: replaceAll})
	if err != nil || resp.Change == nil {
		return sandbox.FileChange{}, orMissing(err, "edit")
	}
	return *resp.Change, nil
}

func (f *files) List(ctx context.Context, path string) ([]sandbox.FileInfo, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpList, Path: path})
	return resp.Entries, err
}

func (f *files) Glob(ctx context.Context, pattern, path string) ([]string, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpGlob, Pattern: pattern, Path: path})
	return resp.Paths, err
}

func (f *files) Grep(ctx context.Context, pattern, path, glob string) ([]sandbox.GrepMatch, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpGrep, Pattern: pattern, Path: path, Glob: glob})
	return resp.Matches, err
}

func (f *files) Stat(ctx context.Context, path string) (sandbox.FileInfo, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpStat, Path: path})
	if err != nil || resp.Info == nil {
		return sandbox.FileInfo{}, orMissing(err, "stat")
	}
	return *resp.Info, nil
}

func (f *files) Manifest(ctx context.Context) ([]sandbox.FileInfo, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpManifest})
	if err != nil {
		return nil, err
	}
	if resp.Truncated {
		return resp.Entries, fmt.Errorf("manifest: more than %d files: %w", helper.MaxManifest, sandbox.ErrTooLarge)
	}
	return resp.Entries, nil
}

func orMissing(err error, op string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s: helper response without payload: %w", op, sandbox.ErrInvalid)
}

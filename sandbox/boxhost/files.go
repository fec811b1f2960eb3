package boxhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// RoundTrip carries one encoded helper request (of operation op) into a
// box, where the helper runs it as the agent's user, and returns the
// helper's encoded response. It classifies its own failures (ErrTimeout,
// ErrNotFound, ErrUnavailable).
type RoundTrip func(ctx context.Context, op string, body []byte) ([]byte, error)

// Files is sandbox.Files over the helper's request protocol, so
// permissions and protected paths apply to file operations as to the
// agent's commands; the host never opens a workspace path.
type Files struct{ rt RoundTrip }

var _ sandbox.Files = (*Files)(nil)

// NewFiles returns the file operations of the box that rt reaches.
func NewFiles(rt RoundTrip) *Files { return &Files{rt: rt} }

func (f *Files) do(ctx context.Context, req helper.Request) (helper.Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return helper.Response{}, fmt.Errorf("encode %s request: %w", req.Op, err)
	}
	if len(body) > helper.MaxRequestBytes {
		return helper.Response{}, fmt.Errorf("%s %s: request of %d bytes: %w", req.Op, req.Path, len(body), sandbox.ErrTooLarge)
	}
	out, err := f.rt(ctx, req.Op, body)
	if err != nil {
		return helper.Response{}, fmt.Errorf("%s %s: %w", req.Op, req.Path, err)
	}
	resp, err := helper.DecodeResponse(bytes.NewReader(out))
	if err != nil {
		return resp, fmt.Errorf("%s %s: %w", req.Op, req.Path, err)
	}
	return resp, nil
}

func (f *Files) Read(ctx context.Context, path string, offset, limit int) (sandbox.ReadResult, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpRead, Path: path, Offset: offset, Limit: limit})
	if err != nil || resp.Read == nil {
		return sandbox.ReadResult{}, orMissing(err, "read")
	}
	return *resp.Read, nil
}

func (f *Files) Write(ctx context.Context, path string, content []byte) (sandbox.FileChange, error) {
	if len(content) > helper.MaxWriteBytes {
		return sandbox.FileChange{}, fmt.Errorf("write %s: %d bytes over the %d cap: %w", path, len(content), helper.MaxWriteBytes, sandbox.ErrTooLarge)
	}
	resp, err := f.do(ctx, helper.Request{Op: helper.OpWrite, Path: path, Content: content})
	if err != nil || resp.Change == nil {
		return sandbox.FileChange{}, orMissing(err, "write")
	}
	return *resp.Change, nil
}

func (f *Files) Edit(ctx context.Context, path, oldString, newString string, replaceAll bool) (sandbox.FileChange, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpEdit, Path: path, Old: oldString, New: newString, ReplaceAll: replaceAll})
	if err != nil || resp.Change == nil {
		return sandbox.FileChange{}, orMissing(err, "edit")
	}
	return *resp.Change, nil
}

func (f *Files) List(ctx context.Context, path string) ([]sandbox.FileInfo, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpList, Path: path})
	if err != nil {
		return nil, err
	}
	return resp.Entries, nil
}

func (f *Files) Glob(ctx context.Context, pattern, path string) ([]string, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpGlob, Pattern: pattern, Path: path})
	if err != nil {
		return nil, err
	}
	return resp.Paths, nil
}

func (f *Files) Grep(ctx context.Context, pattern, path, glob string) ([]sandbox.GrepMatch, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpGrep, Pattern: pattern, Path: path, Glob: glob})
	if err != nil {
		return nil, err
	}
	return resp.Matches, nil
}

func (f *Files) Stat(ctx context.Context, path string) (sandbox.FileInfo, error) {
	resp, err := f.do(ctx, helper.Request{Op: helper.OpStat, Path: path})
	if err != nil || resp.Info == nil {
		return sandbox.FileInfo{}, orMissing(err, "stat")
	}
	return *resp.Info, nil
}

func (f *Files) Manifest(ctx context.Context) ([]sandbox.FileInfo, error) {
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

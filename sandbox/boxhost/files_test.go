package boxhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// helperOp is what `mass-sandbox-helper op` does with one request, rooted
// at dir instead of the workspace mount: the real helper server behind the
// round trip the backends carry over their exec streams.
func helperOp(dir string, calls *int) RoundTrip {
	return func(_ context.Context, op string, body []byte) ([]byte, error) {
		*calls++
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		req, err := helper.DecodeRequest(bytes.NewReader(body))
		if err != nil {
			return nil, enc.Encode(helper.Response{Kind: helper.KindInvalid, Error: err.Error()})
		}
		if req.Op != op {
			return nil, errors.New("op " + op + " carries a " + req.Op + " request")
		}
		err = enc.Encode(helper.NewServer(dir).Do(req))
		return out.Bytes(), err
	}
}

func TestFilesOverHelper(t *testing.T) {
	ctx := context.Background()
	calls := 0
	f := NewFiles(helperOp(t.TempDir(), &calls))
	if _, err := f.Write(ctx, "a/b.txt", []byte("hello world\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Edit(ctx, "a/b.txt", "world", "box", false); err != nil {
		t.Fatal(err)
	}
	r, err := f.Read(ctx, "a/b.txt", 0, 0)
	if err != nil || !strings.Contains(r.Content, "hello box") {
		t.Errorf("read %+v, %v; want the edited line", r, err)
	}
	if got, err := f.Glob(ctx, "**/*.txt", ""); err != nil || len(got) != 1 || !strings.HasSuffix(got[0], "/a/b.txt") {
		t.Errorf("glob %q, %v", got, err)
	}
	if got, err := f.Grep(ctx, "box", "", ""); err != nil || len(got) != 1 {
		t.Errorf("grep %+v, %v", got, err)
	}
	if got, err := f.List(ctx, "a"); err != nil || len(got) != 1 {
		t.Errorf("list %+v, %v", got, err)
	}
	if m, err := f.Manifest(ctx); err != nil || len(m) != 1 || m[0].Path != "a/b.txt" || m[0].SHA256 == "" {
		t.Errorf("manifest %+v, %v; want a/b.txt with its digest", m, err)
	}
	if _, err := f.Stat(ctx, "missing"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("stat of a missing file: %v, want ErrNotFound", err)
	}
	if _, err := f.Edit(ctx, "a/b.txt", "absent", "x", false); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("edit of an absent string: %v, want ErrNotFound", err)
	}
	before := calls
	if _, err := f.Write(ctx, "big", make([]byte, helper.MaxWriteBytes+1)); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("oversized write: %v, want ErrTooLarge", err)
	}
	if calls != before {
		t.Error("an oversized write reached the box")
	}
}

// A transport failure keeps its class and names the operation.
func TestFilesTransportError(t *testing.T) {
	f := NewFiles(func(context.Context, string, []byte) ([]byte, error) {
		return nil, sandbox.ErrTimeout
	})
	_, err := f.Stat(context.Background(), "x")
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.HasPrefix(err.Error(), "stat x: ") {
		t.Errorf("stat: %v, want ErrTimeout prefixed by the op", err)
	}
}

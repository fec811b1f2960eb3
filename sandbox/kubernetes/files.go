package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
	"github.com/mass-dev/mass/sandbox/helper"
)

// fileOpTimeout bounds one helper call.
const fileOpTimeout = 2 * time.Minute

// Files runs file operations through the helper in the box, as the
// agent's user (boxhost.Files). The host never opens a workspace path.
func (b *box) Files() sandbox.Files { return boxhost.NewFiles(b.fileRoundTrip) }

// fileRoundTrip runs one request as one `mass-sandbox-helper op` exec: the
// request on its stdin, the response on its stdout.
func (b *box) fileRoundTrip(ctx context.Context, op string, body []byte) ([]byte, error) {
	if err := b.gone(); err != nil {
		return nil, err
	}
	res, err := b.r.execRaw(ctx, b.pod, execOpts{
		argv:  []string{sandbox.HelperMount, "op"},
		stdin: bytes.NewReader(body), maxBytes: helper.MaxResponseBytes + 1,
		hostTimeout: fileOpTimeout, onAbort: b.killAll,
	})
	if err != nil {
		return nil, err
	}
	if res.TimedOut {
		return nil, fmt.Errorf("helper gave no answer in time: %w", sandbox.ErrTimeout)
	}
	if res.ExitCode != 0 || res.Truncated {
		return nil, fmt.Errorf("helper exit %d (truncated %v): %q: %w", res.ExitCode, res.Truncated, res.Stderr, sandbox.ErrUnavailable)
	}
	return res.Stdout, nil
}

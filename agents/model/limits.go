package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// Caps on what an endpoint may send back (docs/formats.md, "Caps"). A reply
// past one is an error wrapping ErrEndpoint that names the cap; the
// recording keeps the error, never the oversized bytes.
const (
	// MaxResponseBytes caps one HTTP response body (JSON or the whole SSE
	// stream) unless Config.MaxResponseBytes sets another.
	MaxResponseBytes = 16 << 20
	// MaxToolArgBytes caps one tool call's arguments.
	MaxToolArgBytes = 1 << 20
	// MaxUsageTokens caps each usage figure; more is not a real count.
	MaxUsageTokens = 1 << 26
)

// ErrReplyCap marks a reply past a cap; it is not retried.
var ErrReplyCap = errors.New("over a model reply cap")

// ErrTruncatedStream is a stream that ended before its finish_reason or
// its [DONE]; it is retried like a broken connection.
var ErrTruncatedStream = errors.New("stream ended before finish_reason and [DONE]")

// ErrBadReply is a success status with a body that does not decode (a
// reply cut short in transit); it is retried.
var ErrBadReply = errors.New("reply does not decode")

// streamEnd is shared, through the request context, between stream() and
// the transport, which watches the SSE body for the [DONE] line.
type streamEnd struct{ done atomic.Bool }

type streamEndKey struct{}

// cappedBody limits a response body to MaxResponseBytes and notes an SSE
// "data: [DONE]" line in end.
type cappedBody struct {
	rc   io.ReadCloser
	n    int64
	max  int64
	end  *streamEnd
	tail []byte // the last bytes read, so a marker split across reads is seen
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		return 0, fmt.Errorf("response body passes %d bytes (MaxResponseBytes): %w", b.max, ErrReplyCap)
	}
	if b.end != nil && n > 0 {
		buf := append(b.tail, p[:n]...)
		if bytes.Contains(buf, []byte("data: [DONE]")) {
			b.end.done.Store(true)
		}
		b.tail = append([]byte(nil), buf[max(0, len(buf)-16):]...)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// capResponse wraps resp's body; see cappedBody.
func capResponse(ctx context.Context, resp *http.Response, max int64) {
	if resp == nil || resp.Body == nil {
		return
	}
	end, _ := ctx.Value(streamEndKey{}).(*streamEnd)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		end = nil
	}
	resp.Body = &cappedBody{rc: resp.Body, end: end, max: max}
}

// CheckReply applies the tool-argument and usage caps to a whole reply.
func CheckReply(r Response) error {
	for _, tc := range r.Message.ToolCalls {
		if len(tc.Function.Arguments) > MaxToolArgBytes {
			return fmt.Errorf("tool call %s has %d bytes of arguments, over %d (MaxToolArgBytes): %w",
				tc.Function.Name, len(tc.Function.Arguments), MaxToolArgBytes, ErrReplyCap)
		}
	}
	u := r.Usage
	for _, v := range []int{u.PromptTokens, u.CompletionTokens, u.TotalTokens} {
		if v < 0 || v > MaxUsageTokens {
			return fmt.Errorf("usage {prompt %d, completion %d, total %d} has a negative or absurd figure (cap %d): %w",
				u.PromptTokens, u.CompletionTokens, u.TotalTokens, MaxUsageTokens, ErrReplyCap)
		}
	}
	if u.TotalTokens != 0 && u.TotalTokens < u.PromptTokens+u.CompletionTokens {
		return fmt.Errorf("usage total %d is below prompt %d + completion %d: %w", u.TotalTokens, u.PromptTokens, u.CompletionTokens, ErrReplyCap)
	}
	return nil
}

// ReadBody reads all of r, at most limit bytes; more is ErrReplyCap.
func ReadBody(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response body passes %d bytes (MaxResponseBytes): %w", limit, ErrReplyCap)
	}
	return b, nil
}

// ReplyLimit is cfg's response-body cap.
func (c Config) ReplyLimit() int64 {
	if c.MaxResponseBytes > 0 {
		return c.MaxResponseBytes
	}
	return MaxResponseBytes
}

// CapReader reads r until limit bytes have passed; then it fails with
// ErrReplyCap (for streamed replies, read as they come).
func CapReader(r io.Reader, limit int64) io.Reader { return &capReader{r: r, left: limit} }

type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return 0, fmt.Errorf("streamed reply passes the MaxResponseBytes cap: %w", ErrReplyCap)
	}
	return n, err
}

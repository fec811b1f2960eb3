package anthropic

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mass-dev/mass/agents/model"
)

// FuzzStream feeds arbitrary event streams to the SSE reader: it never
// panics, and a stream without message_stop is never a reply.
func FuzzStream(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_delta\",\"index\":99999999999}\n\n"))
	c, err := New(model.Config{Name: "fuzz", Provider: model.ProviderAnthropic, BaseURL: "http://127.0.0.1:1", Model: "m"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := c.read(bytes.NewReader(b))
		if err == nil && !bytes.Contains(b, []byte("message_stop")) {
			t.Fatalf("a stream without message_stop gave a reply %+v", r)
		}
		if err != nil && !errors.Is(err, model.ErrTruncatedStream) && !errors.Is(err, model.ErrBadReply) {
			var ae *model.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("unclassified error %v", err)
			}
		}
	})
}

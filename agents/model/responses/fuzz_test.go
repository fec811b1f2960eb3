package responses

import (
	"encoding/json"
	"testing"

	"github.com/mass-dev/mass/agents/model"
)

// FuzzResult decodes arbitrary response objects and turns them into
// replies: never a panic, never a reply from an unfinished response.
func FuzzResult(f *testing.F) {
	f.Add([]byte(`{"id":"r","object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`))
	f.Add([]byte(`{"id":"r","object":"response","status":"failed","error":{"code":"server_error","message":"boom"}}`))
	f.Add([]byte(`{"id":"r","object":"response","status":"in_progress","usage":{"input_tokens":-5}}`))
	c, err := New(model.Config{Name: "fuzz", Provider: model.ProviderOpenAIResponses, BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Response
		if json.Unmarshal(b, &r) != nil {
			return
		}
		out, err := c.result(r)
		if err == nil && r.Status != StatusCompleted && r.Status != StatusIncomplete {
			t.Fatalf("status %q gave a reply %+v", r.Status, out)
		}
	})
}

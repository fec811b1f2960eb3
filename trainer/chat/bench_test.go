package chat

import (
	"testing"

	"github.com/mass-dev/mass/trainer/chat/jinja"
)

// BenchmarkEngineRender renders the Qwen3.6 template over a 60-turn agent conversation
// with its prefix-derived masks (the SFT builder's engine path).
func BenchmarkEngineRender(b *testing.B) {
	tm := loadTestTemplate(b, "qwen3_6")
	tm.splits = tm.probeSplits()
	var convs []goldenConv
	for _, c := range readJSONL[goldenConv](b, "testdata/conversations.jsonl") {
		if c.ID == "agent_loop" {
			convs = append(convs, c)
		}
	}
	c := convs[0]
	msgs := append([]Value(nil), c.Messages[:2]...)
	for range 30 {
		msgs = append(msgs, c.Messages[2], c.Messages[3])
	}
	msgs = append(msgs, c.Messages[len(c.Messages)-1])
	raw := RawMessages(msgs)
	tools := JinjaValue(*c.Tools)
	b.ResetTimer()
	for range b.N {
		r, err := tm.RenderValues(raw, tools, Options{Kwargs: map[string]jinja.Value{}})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(r.Text)))
	}
}

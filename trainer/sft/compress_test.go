package sft

import (
	"strings"
	"testing"

	"github.com/mass-dev/mass/trainer/chat"
)

// A call marked compressed starts a new segment supervised only after its
// request; a chat_compression side query supervises only its summary.
func TestCompressedSegments(t *testing.T) {
	m := func(role, content string) chat.Message { return chat.Message{Role: role, Content: content} }
	sys, task := m("system", "you are w"), m("user", "do it")
	a1, a2, a3 := m("assistant", "step 1"), m("assistant", "step 2"), m("assistant", "step 3")
	summary, ack := m("user", "<state_snapshot>s</state_snapshot>"), m("assistant", "Got it. Thanks for the additional context!")
	ep := &Episode{Meta: EpisodeMeta{TaskID: "t"}, Calls: []Call{
		{Seq: 1, Thread: "w", Role: RoleWorker, Messages: []chat.Message{sys, task}, Response: a1, OK: true},
		{Seq: 2, Thread: "w", Role: RoleWorker, Messages: []chat.Message{sys, task, a1, m("user", "more")}, Response: a2, OK: true},
		{Seq: 3, Thread: "w/compress-1", Role: RoleAuxiliary, Purpose: PurposeCompression,
			Messages: []chat.Message{m("system", "snapshot"), task, a1, m("user", "First, reason")}, Response: m("assistant", summary.Content), OK: true},
		{Seq: 4, Thread: "w", Role: RoleWorker, Compressed: true,
			Messages: []chat.Message{sys, summary, ack, m("user", "more"), a2, m("user", "go")}, Response: a3, OK: true},
	}}
	var st Stats
	segs := Segments(ep, true, &st)
	var got []string
	for _, s := range segs {
		for i := s.SupervisedFrom; i < len(s.Messages); i++ {
			if s.Messages[i].Role == "assistant" {
				got = append(got, s.Thread+":"+s.Messages[i].Content)
			}
		}
	}
	want := "w:step 1|w:step 2|w:step 3|w/compress-1:<state_snapshot>s</state_snapshot>"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("supervised turns %q, want %q (each generated turn once, never the acknowledgement)", g, want)
	}
}

package sft

import (
	"errors"
	"testing"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer/chat"
)

// A header past 90% of the window is ErrHeaderTooLong, class ErrTooLarge.
func TestHeaderTooLongClass(t *testing.T) {
	r := &chat.Rendered{Turns: []chat.Turn{{Role: "user"}, {Role: "assistant"}}}
	e := &chat.Encoded{IDs: make([]int32, 200), AssistantMask: make([]uint8, 200), TurnStart: []int{0, 95}}
	_, err := Windows(&Segment{}, r, e, WindowConfig{MaxTokens: 100, ContextTokens: 10})
	if !errors.Is(err, ErrHeaderTooLong) || !errors.Is(err, errclass.ErrTooLarge) {
		t.Errorf("a 95-token header in a 100-token window: %v, want ErrHeaderTooLong (class ErrTooLarge)", err)
	}
}

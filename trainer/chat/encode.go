package chat

import "github.com/mass-dev/mass/trainer/tokenizer"

// Encoded is a tokenized rendering.
type Encoded struct {
	IDs []int32
	// AssistantMask is 1 for every token whose whole span lies inside an assistant span.
	AssistantMask []uint8
	// TurnStart[k] is the index of the first token of Rendered.Turns[k].
	TurnStart []int
}

// Encode tokenizes a rendering and derives the assistant mask and turn boundaries.
func Encode(tok *tokenizer.Tokenizer, r *Rendered) *Encoded {
	ids, ends := tok.EncodeOffsets(r.Text)
	e := &Encoded{IDs: ids, AssistantMask: make([]uint8, len(ids)), TurnStart: make([]int, len(r.Turns))}
	span, start := 0, 0
	for k, end := range ends {
		for span < len(r.Assistant) && r.Assistant[span][1] < end {
			span++
		}
		if span < len(r.Assistant) && start >= r.Assistant[span][0] && end <= r.Assistant[span][1] {
			e.AssistantMask[k] = 1
		}
		start = end
	}
	// Turns start at "<|im_start|>", an added token, so a token boundary always falls there.
	tokStart := func(k int) int {
		if k == 0 {
			return 0
		}
		return ends[k-1]
	}
	k := 0
	for t, turn := range r.Turns {
		for k < len(ends) && tokStart(k) < turn.Start {
			k++
		}
		e.TurnStart[t] = k
	}
	return e
}

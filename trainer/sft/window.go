package sft

import (
	"fmt"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer/chat"
)

// Window-shaping defaults (the paper's settings).
const (
	DefaultMaxTokens     = 49152
	DefaultContextTokens = 8192
	// MaxHeaderFraction bounds the masked header (system + first user turn) in a window.
	MaxHeaderFraction = 0.9
)

// WindowConfig shapes windows.
type WindowConfig struct {
	MaxTokens     int // at most this many tokens per window
	ContextTokens int // at most this many tokens of earlier blocks as masked context
}

// DefaultWindowConfig returns the paper's window shape.
func DefaultWindowConfig() WindowConfig {
	return WindowConfig{MaxTokens: DefaultMaxTokens, ContextTokens: DefaultContextTokens}
}

// ErrHeaderTooLong reports a segment whose header does not fit in MaxHeaderFraction of a
// window (class errclass.ErrTooLarge).
var ErrHeaderTooLong = errclass.New("header longer than 90% of the window", errclass.ErrTooLarge)

// block is a token range after the header that ends with an assistant turn.
type block struct {
	start, end int
	supervised bool
}

// Windows cuts an encoded segment into rows. Every window is: the masked header (system and
// first user turn), then up to ContextTokens tokens that immediately precede its first loss
// block (masked), then whole loss blocks while they fit. A block is the turns up to and
// including one assistant turn; a block longer than the room left after the header is cut
// into pieces. Labels are the token ids on assistant tokens of supervised turns, IgnoreIndex
// elsewhere. Windows without supervised tokens are not emitted.
func Windows(seg *Segment, r *chat.Rendered, e *chat.Encoded, cfg WindowConfig) ([]Row, error) {
	n := len(e.IDs)
	firstUser := -1
	for k, t := range r.Turns {
		if t.Role == "user" {
			firstUser = k
			break
		}
	}
	if firstUser < 0 {
		return nil, nil // nothing was asked; nothing to learn
	}
	h := n
	if firstUser+1 < len(r.Turns) {
		h = e.TurnStart[firstUser+1]
	}
	if float64(h) > MaxHeaderFraction*float64(cfg.MaxTokens) {
		return nil, fmt.Errorf("%w: %d tokens, window %d", ErrHeaderTooLong, h, cfg.MaxTokens)
	}
	room := cfg.MaxTokens - h

	var blocks []block
	start := h
	for k := firstUser + 1; k < len(r.Turns); k++ {
		t := r.Turns[k]
		if t.Role != "assistant" {
			continue
		}
		end := n
		if k+1 < len(r.Turns) {
			end = e.TurnStart[k+1]
		}
		sup := t.Message >= seg.SupervisedFrom
		for s := start; s < end; s += room {
			blocks = append(blocks, block{start: s, end: min(s+room, end), supervised: sup})
		}
		start = end
	}

	var rows []Row
	i := 0
	for i < len(blocks) && !blocks[i].supervised {
		i++
	}
	for i < len(blocks) {
		b := blocks[i]
		ctx := min(cfg.ContextTokens, b.start-h, room-(b.end-b.start))
		used, j := ctx, i
		for j < len(blocks) && used+blocks[j].end-blocks[j].start <= room {
			used += blocks[j].end - blocks[j].start
			j++
		}
		row := makeRow(e, h, b.start-ctx, b.start, blocks[j-1].end, blocks[i:j])
		i = j
		if row.NLossTokens == 0 {
			continue
		}
		row.Thread, row.Role, row.IsMain, row.Segment, row.Window = seg.Thread, seg.Role, seg.IsMain, seg.Index, len(rows)
		rows = append(rows, row)
	}
	return rows, nil
}

// makeRow assembles header [0,h), masked context [ctxStart,lossStart) and loss blocks up to
// lossEnd.
func makeRow(e *chat.Encoded, h, ctxStart, lossStart, lossEnd int, blocks []block) Row {
	n := h + lossEnd - ctxStart
	row := Row{InputIDs: make([]int32, 0, n), Labels: make([]int32, 0, n), NTokens: n}
	row.HeaderTokens = h
	row.InputIDs = append(row.InputIDs, e.IDs[:h]...)
	row.InputIDs = append(row.InputIDs, e.IDs[ctxStart:lossEnd]...)
	for k := 0; k < h+lossStart-ctxStart; k++ {
		row.Labels = append(row.Labels, IgnoreIndex)
	}
	for _, b := range blocks {
		for t := b.start; t < b.end; t++ {
			if b.supervised && e.AssistantMask[t] == 1 {
				row.Labels = append(row.Labels, e.IDs[t])
				row.NLossTokens++
			} else {
				row.Labels = append(row.Labels, IgnoreIndex)
			}
		}
	}
	return row
}

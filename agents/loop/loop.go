// Package loop detects an agent that repeats itself, with qwen-code's
// always-on rules: identical consecutive tool calls, the same call many
// times in one turn, a per-turn tool-call cap, and repeated content.
package loop

import (
	"crypto/sha256"
	"fmt"
)

// Defaults, after qwen-code's loop detection service.
const (
	DefaultConsecutiveCalls = 5  // identical tool calls in a row
	DefaultSameCallPerTurn  = 6  // the same call within one turn
	DefaultCallsPerTurn     = 64 // tool calls in one assistant message
	DefaultChunkSize        = 50 // content chunk compared for chanting
	DefaultChantThreshold   = 10 // occurrences of one chunk that count as chanting
)

// Rules name what tripped; they go into the ledger's loop_halt record.
const (
	RuleConsecutive = "consecutive_identical_calls"
	RuleSameInTurn  = "same_call_in_turn"
	RuleTurnCap     = "tool_calls_per_turn"
	RuleChanting    = "repeated_content"
)

// Config sets the thresholds; zero fields take the defaults.
type Config struct {
	ConsecutiveCalls int
	SameCallPerTurn  int
	CallsPerTurn     int
	ChunkSize        int
	ChantThreshold   int
}

// Halt says why an agent was stopped.
type Halt struct {
	Rule   string
	Detail string
}

func (h *Halt) Error() string { return fmt.Sprintf("loop detected (%s): %s", h.Rule, h.Detail) }

// Detector follows one agent. It is not safe for concurrent use: one agent
// loop owns it.
type Detector struct {
	cfg      Config
	last     [32]byte
	run      int
	turn     map[[32]byte]int
	chunks   map[string][]int
	contentN int
}

// New returns a detector with cfg's thresholds.
func New(cfg Config) *Detector {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.ConsecutiveCalls, DefaultConsecutiveCalls)
	def(&cfg.SameCallPerTurn, DefaultSameCallPerTurn)
	def(&cfg.CallsPerTurn, DefaultCallsPerTurn)
	def(&cfg.ChunkSize, DefaultChunkSize)
	def(&cfg.ChantThreshold, DefaultChantThreshold)
	return &Detector{cfg: cfg, chunks: map[string][]int{}}
}

// Turn checks one assistant message: its content and its tool calls (name
// and argument text). It returns a Halt when the agent must stop.
func (d *Detector) Turn(content string, calls [][2]string) *Halt {
	if h := d.content(content); h != nil {
		return h
	}
	if len(calls) > d.cfg.CallsPerTurn {
		return &Halt{Rule: RuleTurnCap, Detail: fmt.Sprintf("%d tool calls in one turn (cap %d)", len(calls), d.cfg.CallsPerTurn)}
	}
	d.turn = map[[32]byte]int{}
	for _, c := range calls {
		k := key(c[0], c[1])
		d.turn[k]++
		if d.turn[k] >= d.cfg.SameCallPerTurn {
			return &Halt{Rule: RuleSameInTurn, Detail: fmt.Sprintf("%s called %d times with the same arguments in one turn", c[0], d.turn[k])}
		}
		if k == d.last {
			d.run++
		} else {
			d.last, d.run = k, 1
		}
		if d.run >= d.cfg.ConsecutiveCalls {
			return &Halt{Rule: RuleConsecutive, Detail: fmt.Sprintf("%s called %d times in a row with the same arguments", c[0], d.run)}
		}
	}
	return nil
}

// content tracks fixed-size chunks of the agent's text. A chunk seen
// ChantThreshold times, with its occurrences packed closely (mean gap at
// most 1.5 chunk sizes), is chanting. Chunks of fewer than minDistinct
// distinct bytes (separators, table rules) are ignored.
func (d *Detector) content(s string) *Halt {
	cs := d.cfg.ChunkSize
	for i := 0; i+cs <= len(s); i++ {
		c := s[i : i+cs]
		pos := d.contentN + i
		if !varied(c) {
			continue // rules, separators and padding repeat by design
		}
		ps := append(d.chunks[c], pos)
		if len(ps) > d.cfg.ChantThreshold {
			ps = ps[1:]
		}
		d.chunks[c] = ps
		if len(ps) >= d.cfg.ChantThreshold {
			span := ps[len(ps)-1] - ps[0]
			if span <= (len(ps)-1)*cs*3/2 {
				return &Halt{Rule: RuleChanting, Detail: fmt.Sprintf("the same %d-byte passage repeated %d times: %q", cs, len(ps), c)}
			}
		}
	}
	d.contentN += len(s) + 1
	if len(d.chunks) > 1<<16 {
		d.chunks = map[string][]int{}
	}
	return nil
}

// varied reports whether a chunk has enough distinct bytes to be prose or code.
func varied(c string) bool {
	var seen [256]bool
	n := 0
	for i := 0; i < len(c); i++ {
		if !seen[c[i]] {
			seen[c[i]] = true
			if n++; n >= minDistinct {
				return true
			}
		}
	}
	return false
}

// minDistinct is how many distinct bytes a chunk needs to count for chanting.
const minDistinct = 8

func key(name, args string) [32]byte {
	return sha256.Sum256([]byte(name + "\x00" + args))
}

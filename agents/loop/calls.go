package loop

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
)

// callState is what the tool-call guards remember over the whole run.
type callState struct {
	lastKey     [32]byte
	consecutive int
	shellStreak int
	total       int
	counts      map[[32]byte]int
	maxRepeat   int
	recentKeys  [][32]byte
	recentNames []string
	lastName    string
	nameStreak  int
	seenNonRead bool
}

func newCallState() callState { return callState{counts: map[[32]byte]int{}} }

// call runs the always-on guards, then the heuristic ones, on one tool call.
func (d *Detector) call(name, args string) *Halt {
	s, cfg := &d.calls, d.cfg
	k := key(name, args)
	// A tool call ends the reasoning and content streams before it.
	d.content = newContentState()
	d.thought = nil
	s.counts[k]++
	s.maxRepeat = max(s.maxRepeat, s.counts[k])
	if k == s.lastKey && s.consecutive > 0 {
		s.consecutive++
	} else {
		s.lastKey, s.consecutive = k, 1
	}
	if s.consecutive >= cfg.ConsecutiveCalls {
		return &Halt{Rule: RuleConsecutive, Detail: fmt.Sprintf("%s called %d times in a row with the same arguments", name, s.consecutive)}
	}
	if gitInspection(name, args) {
		s.shellStreak++
	} else {
		s.shellStreak = 0
	}
	if s.shellStreak >= cfg.ShellStagnation {
		return &Halt{Rule: RuleShellStagnation, Detail: fmt.Sprintf("%d git status/diff/ls-files overview commands in a row", s.shellStreak)}
	}
	s.total++
	if h := d.turnCap(name); h != nil {
		return h
	}
	if !cfg.Heuristics {
		return nil
	}
	return d.heuristics(name, k)
}

// turnCap is qwen-code's per-turn cap: hard when set explicitly, else soft
// (halts past the cap only when stuck) with a hard backstop.
func (d *Detector) turnCap(name string) *Halt {
	s, cfg := &d.calls, d.cfg
	if s.total <= cfg.CallsPerTurn {
		return nil
	}
	stuck := s.maxRepeat >= cfg.GlobalDuplicates
	hard := cfg.CallsPerTurn * cfg.HardMultiplier
	if !cfg.explicitCap && !stuck && s.total <= hard {
		return nil
	}
	why := fmt.Sprintf("%d tool calls in this run (cap %d)", s.total, cfg.CallsPerTurn)
	switch {
	case cfg.explicitCap:
	case stuck:
		why += fmt.Sprintf(", and one call was repeated %d times", s.maxRepeat)
	default:
		why = fmt.Sprintf("%d tool calls in this run (hard cap %d)", s.total, hard)
	}
	return &Halt{Rule: RuleTurnCap, Detail: why + "; last: " + name}
}

// heuristics are the opt-in guards, evaluated in qwen-code's order.
func (d *Detector) heuristics(name string, k [32]byte) *Halt {
	s, cfg := &d.calls, d.cfg
	if !readLike(name) {
		s.seenNonRead = true
	}
	if name == s.lastName {
		s.nameStreak++
	} else {
		s.lastName, s.nameStreak = name, 1
	}
	s.recentNames = push(s.recentNames, name, cfg.FileReadWindow)
	s.recentKeys = push(s.recentKeys, k, 2*cfg.AlternatingCycles)
	if n := s.counts[k]; n >= cfg.GlobalDuplicates {
		return &Halt{Rule: RuleGlobalDuplicate, Detail: fmt.Sprintf("%s called %d times with the same arguments in this run", name, n)}
	}
	if alternating(s.recentKeys, 2*cfg.AlternatingCycles) {
		return &Halt{Rule: RuleAlternating, Detail: fmt.Sprintf("two calls alternated %d times (last: %s)", cfg.AlternatingCycles, name)}
	}
	if s.seenNonRead && len(s.recentNames) >= cfg.FileReadThreshold {
		reads := 0
		for _, n := range s.recentNames {
			if readLike(n) {
				reads++
			}
		}
		if reads >= cfg.FileReadThreshold {
			return &Halt{Rule: RuleReadFileLoop, Detail: fmt.Sprintf("%d of the last %d tool calls only read files", reads, len(s.recentNames))}
		}
	}
	if s.nameStreak >= cfg.Stagnation {
		return &Halt{Rule: RuleStagnation, Detail: fmt.Sprintf("%s called %d times in a row", name, s.nameStreak)}
	}
	return nil
}

func push[T any](xs []T, x T, n int) []T {
	xs = append(xs, x)
	if len(xs) > n {
		xs = xs[len(xs)-n:]
	}
	return xs
}

// alternating reports whether a full window holds A B A B ... with A != B.
func alternating(ks [][32]byte, n int) bool {
	if len(ks) < n || ks[0] == ks[1] {
		return false
	}
	for i, k := range ks {
		if k != ks[i%2] {
			return false
		}
	}
	return true
}

// readLike is qwen-code's set of file-reading tools and name prefixes.
func readLike(name string) bool {
	switch name {
	case "read_file", "read_many_files", "list_directory", "zoom_image":
		return true
	}
	return strings.HasPrefix(name, "read_") || strings.HasPrefix(name, "list_")
}

// key identifies a call by name and arguments; JSON arguments are compared
// by value (key order and spacing do not matter), anything else by text.
func key(name, args string) [32]byte {
	var v any
	canon := []byte(args)
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	return sha256.Sum256(bytes.Join([][]byte{[]byte(name), canon}, []byte{0}))
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

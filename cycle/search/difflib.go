package search

import (
	"fmt"
	"strings"
)

// This file computes line diffs the way Python's difflib does (the
// reference's history diffs are difflib.unified_diff output): the
// Ratcliff/Obershelp matcher with its junk heuristic, grouped hunks with n
// context lines, and the unified hunk headers. The parity test checks it
// against python3's difflib when one is installed.

type match struct{ a, b, size int }

type opcode struct {
	tag            byte // 'e' equal, 'r' replace, 'd' delete, 'i' insert
	i1, i2, j1, j2 int
}

type matcher struct {
	a, b   []string
	b2j    map[string][]int
	junked map[string]bool
}

func newMatcher(a, b []string) *matcher {
	m := &matcher{a: a, b: b, b2j: map[string][]int{}, junked: map[string]bool{}}
	for j, s := range b {
		m.b2j[s] = append(m.b2j[s], j)
	}
	// difflib's autojunk: in a sequence of 200 or more lines, a line that
	// occurs more than 1% (+1) of the time is treated as junk.
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		for s, idx := range m.b2j {
			if len(idx) > ntest {
				m.junked[s] = true
				delete(m.b2j, s)
			}
		}
	}
	return m
}

// longest is difflib's find_longest_match (no isjunk function, so only
// the popular lines are junk).
func (m *matcher) longest(alo, ahi, blo, bhi int) match {
	besti, bestj, bestsize := alo, blo, 0
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		next := map[int]int{}
		for _, j := range m.b2j[m.a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			next[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = next
	}
	// Extend with equal non-junk, then junk, lines on both sides (the
	// popular elements are the only junk here; both passes are the same
	// test without an isjunk function).
	for besti > alo && bestj > blo && m.a[besti-1] == m.b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && m.a[besti+bestsize] == m.b[bestj+bestsize] {
		bestsize++
	}
	return match{besti, bestj, bestsize}
}

func (m *matcher) matchingBlocks() []match {
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(m.a), 0, len(m.b)}}
	var blocks []match
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		x := m.longest(s.alo, s.ahi, s.blo, s.bhi)
		if x.size == 0 {
			continue
		}
		blocks = append(blocks, x)
		if s.alo < x.a && s.blo < x.b {
			queue = append(queue, span{s.alo, x.a, s.blo, x.b})
		}
		if x.a+x.size < s.ahi && x.b+x.size < s.bhi {
			queue = append(queue, span{x.a + x.size, s.ahi, x.b + x.size, s.bhi})
		}
	}
	sortMatches(blocks)
	var out []match
	i1, j1, k1 := 0, 0, 0
	for _, x := range blocks {
		if i1+k1 == x.a && j1+k1 == x.b {
			k1 += x.size
			continue
		}
		if k1 > 0 {
			out = append(out, match{i1, j1, k1})
		}
		i1, j1, k1 = x.a, x.b, x.size
	}
	if k1 > 0 {
		out = append(out, match{i1, j1, k1})
	}
	return append(out, match{len(m.a), len(m.b), 0})
}

func sortMatches(ms []match) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && (ms[j].a < ms[j-1].a || (ms[j].a == ms[j-1].a && ms[j].b < ms[j-1].b)); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func (m *matcher) opcodes() []opcode {
	var ops []opcode
	i, j := 0, 0
	for _, x := range m.matchingBlocks() {
		var tag byte
		switch {
		case i < x.a && j < x.b:
			tag = 'r'
		case i < x.a:
			tag = 'd'
		case j < x.b:
			tag = 'i'
		}
		if tag != 0 {
			ops = append(ops, opcode{tag, i, x.a, j, x.b})
		}
		i, j = x.a+x.size, x.b+x.size
		if x.size > 0 {
			ops = append(ops, opcode{'e', x.a, i, x.b, j})
		}
	}
	return ops
}

// grouped is difflib's get_grouped_opcodes(n).
func (m *matcher) grouped(n int) [][]opcode {
	codes := m.opcodes()
	if len(codes) == 0 {
		codes = []opcode{{'e', 0, 1, 0, 1}}
	}
	if c := codes[0]; c.tag == 'e' {
		codes[0] = opcode{'e', max(c.i1, c.i2-n), c.i2, max(c.j1, c.j2-n), c.j2}
	}
	if c := codes[len(codes)-1]; c.tag == 'e' {
		codes[len(codes)-1] = opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)}
	}
	nn := n + n
	var groups [][]opcode
	var group []opcode
	for _, c := range codes {
		if c.tag == 'e' && c.i2-c.i1 > nn {
			group = append(group, opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)})
			groups = append(groups, group)
			group = nil
			c = opcode{'e', max(c.i1, c.i2-n), c.i2, max(c.j1, c.j2-n), c.j2}
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].tag == 'e') {
		groups = append(groups, group)
	}
	return groups
}

func unifiedRange(start, stop int) string {
	begin, length := start+1, stop-start
	if length == 1 {
		return fmt.Sprint(begin)
	}
	if length == 0 {
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, length)
}

// UnifiedLines is difflib.unified_diff(a, b, fromfile, tofile,
// lineterm="", n=n) joined with newlines: empty when a and b are equal.
func UnifiedLines(a, b []string, from, to string, n int) string {
	var out []string
	for i, g := range newMatcher(a, b).grouped(n) {
		if i == 0 {
			out = append(out, "--- "+from, "+++ "+to)
		}
		first, last := g[0], g[len(g)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", unifiedRange(first.i1, last.i2), unifiedRange(first.j1, last.j2)))
		for _, c := range g {
			if c.tag == 'e' {
				for _, s := range a[c.i1:c.i2] {
					out = append(out, " "+s)
				}
				continue
			}
			if c.tag == 'r' || c.tag == 'd' {
				for _, s := range a[c.i1:c.i2] {
					out = append(out, "-"+s)
				}
			}
			if c.tag == 'r' || c.tag == 'i' {
				for _, s := range b[c.j1:c.j2] {
					out = append(out, "+"+s)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// pySplitLines is Python's str.splitlines() for the line breaks a design
// text can hold (\n, \r\n, \r and the other Unicode line boundaries).
func pySplitLines(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, string(rs[start:i]))
			if rs[i] == '\r' && i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

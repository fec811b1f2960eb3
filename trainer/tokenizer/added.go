package tokenizer

import (
	"sort"
	"strings"
)

// addedMatcher finds added tokens (special or not) inside raw text, leftmost first and, at
// one position, longest first, as Hugging Face's AddedVocabulary splitter does.
type addedMatcher struct {
	byFirst [256][]addedTok
	firsts  string // distinct first bytes, for IndexAny
	ids     map[int32]bool
}

type addedTok struct {
	s  string
	id int32
}

func newAddedMatcher() *addedMatcher { return &addedMatcher{ids: make(map[int32]bool)} }

func (m *addedMatcher) add(s string, id int32) {
	m.byFirst[s[0]] = append(m.byFirst[s[0]], addedTok{s, id})
	m.ids[id] = true
}

func (m *addedMatcher) finish() {
	var firsts []byte
	for b := range m.byFirst {
		l := m.byFirst[b]
		if len(l) == 0 {
			continue
		}
		firsts = append(firsts, byte(b))
		sort.SliceStable(l, func(i, j int) bool { return len(l[i].s) > len(l[j].s) })
	}
	m.firsts = string(firsts)
}

func (m *addedMatcher) isAdded(id int32) bool { return m.ids[id] }

// find returns the first added token in s at or after from: its start, end and id, or
// start -1.
func (m *addedMatcher) find(s string, from int) (int, int, int32) {
	if m.firsts == "" {
		return -1, -1, 0
	}
	for i := from; i < len(s); {
		var k int
		if len(m.firsts) == 1 {
			k = strings.IndexByte(s[i:], m.firsts[0])
		} else {
			k = indexAnyByte(s[i:], m.firsts)
		}
		if k < 0 {
			return -1, -1, 0
		}
		i += k
		for _, a := range m.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], a.s) {
				return i, i + len(a.s), a.id
			}
		}
		i++
	}
	return -1, -1, 0
}

func indexAnyByte(s, set string) int {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) >= 0 {
			return i
		}
	}
	return -1
}

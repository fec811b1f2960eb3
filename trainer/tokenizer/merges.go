package tokenizer

// mergeTable maps a pair of token ids to the merge's rank and resulting id. It is an
// open-addressing hash table: the BPE inner loop looks pairs up millions of times a second.
type mergeTable struct {
	keys []uint64 // left<<32 | right; emptyKey marks a free slot (ids are < 2^31)
	vals []uint64 // rank<<32 | id
	mask uint64
}

const emptyKey = ^uint64(0)

func newMergeTable(n int) *mergeTable {
	size := 1
	for size < 2*n+2 {
		size <<= 1
	}
	m := &mergeTable{keys: make([]uint64, size), vals: make([]uint64, size), mask: uint64(size - 1)}
	for i := range m.keys {
		m.keys[i] = emptyKey
	}
	return m
}

func pairKey(l, r int32) uint64 { return uint64(uint32(l))<<32 | uint64(uint32(r)) }

func hash64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	return k
}

// put stores a merge; a repeated pair keeps the later entry, as Hugging Face's map does.
func (m *mergeTable) put(l, r, rank, id int32) {
	k := pairKey(l, r)
	for i := hash64(k) & m.mask; ; i = (i + 1) & m.mask {
		if m.keys[i] == k || m.keys[i] == emptyKey {
			m.keys[i] = k
			m.vals[i] = uint64(uint32(rank))<<32 | uint64(uint32(id))
			return
		}
	}
}

// get returns the merge of (l, r): its rank and the merged id.
func (m *mergeTable) get(l, r int32) (rank, id int32, ok bool) {
	k := pairKey(l, r)
	for i := hash64(k) & m.mask; ; i = (i + 1) & m.mask {
		switch m.keys[i] {
		case k:
			v := m.vals[i]
			return int32(v >> 32), int32(uint32(v)), true
		case emptyKey:
			return 0, 0, false
		}
	}
}

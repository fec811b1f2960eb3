package tokenizer

import "container/heap"

// heapThreshold is the word length (in bytes) from which the O(n log n) merge loop is used
// instead of the quadratic scan that is faster for ordinary short words.
const heapThreshold = 48

// bpe appends the ids of one pre-token (raw bytes) to out.
func (t *Tokenizer) bpe(out []int32, word string, scratch *[]int32) []int32 {
	if len(word) == 1 {
		return append(out, t.byteTok[word[0]])
	}
	if len(word) >= heapThreshold {
		return append(out, t.bpeHeap(word)...)
	}
	syms := (*scratch)[:0]
	for i := 0; i < len(word); i++ {
		syms = append(syms, t.byteTok[word[i]])
	}
	for len(syms) > 1 {
		best, bestRank, bestID := -1, int32(1<<31-1), int32(0)
		for i := 0; i+1 < len(syms); i++ {
			if rank, id, ok := t.merges.get(syms[i], syms[i+1]); ok && rank < bestRank {
				best, bestRank, bestID = i, rank, id
			}
		}
		if best < 0 {
			break
		}
		syms[best] = bestID
		syms = append(syms[:best+1], syms[best+2:]...)
	}
	*scratch = syms
	return append(out, syms...)
}

type mergeCand struct {
	rank int32
	pos  int32
	id   int32
	l, r int32 // the pair the candidate was computed for
}

type candHeap []mergeCand

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].pos < h[j].pos
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(mergeCand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// bpeHeap merges with a priority queue over a linked list of symbols: lowest rank first,
// leftmost on ties, which yields the same result as the quadratic scan.
func (t *Tokenizer) bpeHeap(word string) []int32 {
	n := len(word)
	sym := make([]int32, n)
	next := make([]int32, n)
	prev := make([]int32, n)
	alive := make([]bool, n)
	for i := 0; i < n; i++ {
		sym[i] = t.byteTok[word[i]]
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
		alive[i] = true
	}
	next[n-1] = -1
	h := make(candHeap, 0, n)
	push := func(i int32) {
		j := next[i]
		if i < 0 || j < 0 {
			return
		}
		if rank, id, ok := t.merges.get(sym[i], sym[j]); ok {
			h = append(h, mergeCand{rank: rank, pos: i, id: id, l: sym[i], r: sym[j]})
		}
	}
	for i := int32(0); i+1 < int32(n); i++ {
		push(i)
	}
	heap.Init(&h)
	for h.Len() > 0 {
		c := heap.Pop(&h).(mergeCand)
		i := c.pos
		j := next[i]
		if !alive[i] || j < 0 || sym[i] != c.l || sym[j] != c.r {
			continue
		}
		sym[i] = c.id
		alive[j] = false
		next[i] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = i
		}
		if p := prev[i]; p >= 0 {
			if rank, id, ok := t.merges.get(sym[p], sym[i]); ok {
				heap.Push(&h, mergeCand{rank: rank, pos: p, id: id, l: sym[p], r: sym[i]})
			}
		}
		if k := next[i]; k >= 0 {
			if rank, id, ok := t.merges.get(sym[i], sym[k]); ok {
				heap.Push(&h, mergeCand{rank: rank, pos: i, id: id, l: sym[i], r: sym[k]})
			}
		}
	}
	out := make([]int32, 0, n)
	for i := int32(0); i >= 0; i = next[i] {
		out = append(out, sym[i])
	}
	return out
}

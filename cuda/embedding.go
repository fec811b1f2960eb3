package cuda

import "fmt"

// EmbeddingForward is the reference for embedding.cu: out[t,:] = table[ids[t],:] for a
// table of vocab rows of width dim. An id outside [0, vocab) is an error here; the kernel
// writes zeros for it.
func EmbeddingForward(table []float32, vocab, dim int, ids []int32) ([]float32, error) {
	if len(table) != vocab*dim {
		return nil, fmt.Errorf("embedding table has %d values, want %d×%d", len(table), vocab, dim)
	}
	out := make([]float32, len(ids)*dim)
	for t, id := range ids {
		if id < 0 || int(id) >= vocab {
			return nil, fmt.Errorf("token %d: id %d outside vocabulary of %d", t, id, vocab)
		}
		copy(out[t*dim:(t+1)*dim], table[int(id)*dim:(int(id)+1)*dim])
	}
	return out, nil
}

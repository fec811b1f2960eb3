// Package fast is mass-train's fast CPU backend ("cpu"): the Qwen2/Qwen3
// decoder with LoRA in float32, its matrix products on OpenBLAS's sgemm
// (through cgo, one thread per call, the work split over the cores here),
// written as a fused forward and backward per layer rather than a graph.
//
// It keeps one copy of the frozen weights, the model's own float32 tensors,
// and reads them with transpose flags instead of transposed copies. A
// training window keeps each layer's activations (about 20 floats per token
// per hidden unit) but never a T×T attention matrix: attention runs in query
// blocks on GEMMs, stores each row's log-sum-exp and recomputes the
// probabilities in its single backward pass. The LM head runs over the
// supervised positions only, in chunks that compute the loss and the
// gradient of the chunk's logits in one pass and never hold all logits.
//
// LoRA dropout draws the same masks as the reference backend
// (trainer/refbackend) from Batch.Seed, so the two agree with dropout on.
package fast

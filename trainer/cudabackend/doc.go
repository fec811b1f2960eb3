// Package cudabackend is mass-train's CUDA backend: the Qwen3 and Qwen2 decoders and the
// Qwen3.5/3.6 hybrid (Gated DeltaNet and gated attention) with LoRA, built from the kernels
// of package cuda and cuBLASLt products, frozen weights in bf16 and fp32 LoRA gradients, on
// one device or several (pipeline stages and data-parallel replicas over peer copies). The
// backend itself builds only with -tags masscuda (or masscudaemu, on the CPU emulator); the
// FLOP accounting and the memory plan are plain Go.
package cudabackend

// Package cudabackend is mass-train's CUDA backend: the Qwen3 and Qwen2 decoders with LoRA
// built from the kernels of package cuda and cuBLASLt products, frozen weights in bf16 and
// fp32 LoRA gradients. The backend itself builds only with -tags masscuda (or masscudaemu, on the CPU
// emulator); the FLOP accounting used for MFU is plain Go.
package cudabackend

// Package serving puts a new generation in front of the next search and
// collection, in one of two ways a model entry of massd.yaml declares:
// `serving: {lora: runtime}` loads the generation's adapter into a running
// vLLM through its runtime LoRA API (vLLM started with --enable-lora
// --max-lora-rank 64 and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), and
// `serving: {command: [...]}` has massd start and stop the server itself
// on the generation's merged model folder, healthy once /v1/models answers.
package serving

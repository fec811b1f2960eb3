// Package trainer defines the contract between mass-train's training loop and
// its compute backends: the fast CPU backend (trainer/fast, float32 on
// OpenBLAS, "cpu"), the reference (trainer/refbackend, a float64 gorgonia
// graph, "reference") and the CUDA backend (trainer/cudabackend, build tag
// masscuda, "cuda").
package trainer

import (
	"context"

	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
)

// IgnoreIndex is the label of an unsupervised token (Hugging Face convention).
const IgnoreIndex = -100

// Window is one training window. Labels are aligned as in Hugging Face:
// position t predicts Labels[t+1]; IgnoreIndex marks unsupervised tokens.
type Window struct {
	InputIDs []int32
	Labels   []int32
}

// Supervised counts the positions that carry loss (labels[1:] not ignored).
func (w Window) Supervised() int {
	n := 0
	for t := 1; t < len(w.Labels); t++ {
		if w.Labels[t] != IgnoreIndex {
			n++
		}
	}
	return n
}

// Batch is what one ForwardBackward call processes.
type Batch struct {
	Windows []Window
	// Seed determines the LoRA dropout masks, so that a resumed run draws the
	// same masks as an uninterrupted one. Backends derive per-window,
	// per-layer, per-module streams from it.
	Seed uint64
}

// WindowLoss is one window's mean loss over its Tokens supervised positions.
type WindowLoss struct {
	Loss   float64
	Tokens int
}

// Backend computes losses and LoRA gradients of a frozen base model.
//
// Contract:
//   - New backends are built from a *model.Model (float32 weights; a backend
//     may keep them in any precision) and a *lora.Adapter whose Params it
//     reads at every call: the training loop owns the fp32 master values
//     (Param.Data, layout [r,in] for lora_A and [out,r] for lora_B, as PEFT)
//     and updates them between calls; a backend that keeps device copies
//     must upload them at the start of each call.
//   - ForwardBackward applies LoRA dropout (Adapter.Config.Dropout) with masks
//     drawn from Batch.Seed, computes every window's mean supervised-token
//     loss L_w, and ADDS scale * dL_w/dθ for each window into Param.Grad
//     (so the loop zeroes gradients and picks scale = 1/windows per step for
//     a mean over windows, including gradient accumulation).
//   - Loss evaluates without dropout and without touching gradients.
//   - Logits returns the [len(InputIDs), vocab] logits row-major, no dropout.
//   - Windows with no supervised position have Loss 0 and Tokens 0 and
//     contribute no gradient.
//   - A backend is not safe for concurrent use; Close releases its memory.
type Backend interface {
	Name() string
	ForwardBackward(ctx context.Context, b Batch, scale float64) ([]WindowLoss, error)
	Loss(ctx context.Context, windows []Window) ([]WindowLoss, error)
	Logits(ctx context.Context, w Window) ([]float32, error)
	Close() error
}

// DeviceOptimizer is implemented by a backend that can keep the adapter's fp32 masters,
// its gradients and the AdamW moments on its device, so that per step only the losses and
// the gradient norm cross to the host. The training loop uses it when present.
//
// Contract:
//   - StartOptimizer copies Param.Data and o's moments and step count to the device. From
//     then on the backend owns them: ForwardBackward accumulates gradients on the device
//     and leaves Param.Grad alone, and Param.Data and o are stale until PullOptimizer.
//   - OptimizerStep clips the accumulated gradients to global norm o.Cfg.Clip (as
//     optim.ClipGradNorm), applies one optim.AdamW step with learning rate lr, zeroes the
//     gradients and returns the norm before clipping.
//   - PullOptimizer writes the device values back into Param.Data and o (M, V, Steps), for
//     a checkpoint or an export; the device keeps owning them.
type DeviceOptimizer interface {
	StartOptimizer(o *optim.AdamW) error
	OptimizerStep(ctx context.Context, lr float64) (gradNorm float64, err error)
	PullOptimizer(o *optim.AdamW) error
}

// Factory builds a backend; mass-train selects one by name.
type Factory func(m *model.Model, a *lora.Adapter) (Backend, error)

//go:build masscuda || masscudaemu

package cudabackend

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/mass-dev/mass/cuda/device"
	"github.com/mass-dev/mass/cuda/kernels"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// Name is the backend's name on the mass-train command line.
const Name = "cuda"

var _ trainer.Backend = (*Backend)(nil)

// Attention implementations.
const (
	AttnAuto  = "auto"  // AttnTC where the head size is built, AttnClear otherwise
	AttnTC    = "tc"    // tiled kernels on bf16 tensor cores (mma.sync, FlashAttention-2 tiling)
	AttnClear = "clear" // scores by batched cuBLASLt GEMMs and a softmax kernel ([Hq,T,T] scratch)
	AttnFlash = "flash" // tiled kernel, no score matrix (scalar FP32 arithmetic; the tc path's reference)
)

// Options select the device and the implementation choices.
type Options struct {
	Device      int    // the device of a one-device backend
	Devices     []int  // several devices (OpenAny, OpenMulti): Replicas pipelines over them in order
	Replicas    int    // data-parallel replicas; 0 or 1: one
	CublasLtDir string // folder of libcublasLt.so.*; empty: $MASS_CUBLASLT_DIR or the loader path
	Attention   string // AttnAuto (default), AttnTC, AttnClear or AttnFlash
	CEChunk     int    // vocabulary chunk of the fused LM head
	// ClearScratchMax bounds the clear path's scratch per window (ClearScratchBytes); a
	// longer window runs the flash path instead. 0 means DefaultClearScratchMax.
	ClearScratchMax int64
	// Checkpoint is activation checkpointing per layer for training windows: "on", "off" or
	// "auto" (the default: from DefaultCheckpointFrom tokens); MASS_CUDA_CHECKPOINT sets it.
	Checkpoint string
	Log        *slog.Logger
}

// DefaultOptions reads MASS_CUDA_ATTN (auto|tc|clear|flash), MASS_CUDA_CHECKPOINT
// (auto|on|off) and MASS_CUBLASLT_DIR.
func DefaultOptions() Options {
	o := Options{Attention: AttnAuto, CEChunk: kernels.DefaultCEChunk, Log: slog.Default(),
		CublasLtDir: os.Getenv("MASS_CUBLASLT_DIR")}
	if a := os.Getenv("MASS_CUDA_ATTN"); a != "" {
		o.Attention = a
	}
	o.Checkpoint = os.Getenv("MASS_CUDA_CHECKPOINT")
	return o
}

// Backend runs windows on one GPU. It is not safe for concurrent use.
type Backend struct {
	cfg    *model.Config
	ad     *lora.Adapter
	opt    Options
	dev    *device.Device
	ops    *kernels.Ops
	w      *weights
	dopt   *devOpt // set once the device optimizer owns the adapter
	lo, hi int     // the layers this device holds: all of them, or one pipeline stage's
	closed bool
}

// New is the trainer.Factory: it uploads m's weights in bf16 with DefaultOptions.
func New(m *model.Model, a *lora.Adapter) (trainer.Backend, error) {
	return Open(m.Config, m, a, 0, DefaultOptions())
}

// Open starts the device and uploads the weights of m, or, when m is nil, fills the device
// with random weights from seed (for benchmarks of full-size shapes).
func Open(cfg *model.Config, m *model.Model, a *lora.Adapter, seed uint32, opt Options) (*Backend, error) {
	return openStage(cfg, m, a, seed, opt, opt.Device, 0, cfg.NumLayers)
}

// openStage opens device ordinal holding layers [lo, hi): the embedding with layer 0, the
// final norm and LM head with the last layer.
func openStage(cfg *model.Config, m *model.Model, a *lora.Adapter, seed uint32, opt Options, ordinal, lo, hi int) (*Backend, error) {
	if err := supported(cfg, opt); err != nil {
		return nil, err
	}
	if a == nil {
		return nil, errclass.New("cuda backend needs a lora adapter: pass one (it may have no trainable modules)", errclass.ErrInvalid)
	}
	if !a.Config.Uniform() {
		return nil, fmt.Errorf("%w: the cuda backend runs one LoRA rank and alpha for every module; use --backend reference for rank or alpha patterns", model.ErrUnsupported)
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	dev, err := device.Open(ordinal, opt.Log)
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, ad: a, opt: opt, dev: dev, lo: lo, hi: hi}
	err = dev.Do(func(x *device.Exec) error {
		if b.ops, err = kernels.New(x, opt.CublasLtDir); err != nil {
			return err
		}
		opt.Log.Info("cublasLt loaded", "path", b.ops.Lt.Path, "version", b.ops.Lt.Version())
		b.w, err = uploadWeights(b.ops, cfg, m, a, seed, lo, hi)
		return err
	})
	if err != nil {
		dev.Close()
		return nil, err
	}
	return b, nil
}

func supported(c *model.Config, opt Options) error {
	switch {
	case c.Arch != model.Qwen3 && c.Arch != model.Qwen2 && c.Arch != model.Qwen35:
		return fmt.Errorf("%w: the cuda backend runs qwen2, qwen3 and the qwen3_5 hybrid; use --backend reference for %s", model.ErrUnsupported, c.Arch)
	case c.HeadDim%2 != 0:
		return fmt.Errorf("%w: odd head_dim %d", model.ErrUnsupported, c.HeadDim)
	}
	return checkAttention(c, opt.Attention)
}

// Name implements trainer.Backend.
func (b *Backend) Name() string { return Name }

// Close implements trainer.Backend.
func (b *Backend) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	err := b.dev.Do(func(x *device.Exec) error {
		b.w.free(x)
		return b.ops.Close()
	})
	if cerr := b.dev.Close(); err == nil {
		err = cerr
	}
	return err
}

// ForwardBackward implements trainer.Backend.
func (b *Backend) ForwardBackward(ctx context.Context, batch trainer.Batch, scale float64) ([]trainer.WindowLoss, error) {
	out := make([]trainer.WindowLoss, len(batch.Windows))
	err := b.dev.Do(func(x *device.Exec) error {
		if b.dopt == nil {
			if err := b.w.syncLoRA(b.ops, true); err != nil {
				return err
			}
		}
		for i, w := range batch.Windows {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := b.runWindow(x, w, runOpts{train: true, seed: mix(batch.Seed, uint64(i)), gradScale: scale})
			if err != nil {
				return fmt.Errorf("window %d: %w", i, err)
			}
			out[i] = r.loss
		}
		if b.dopt != nil {
			return nil // the gradients stay on the device for OptimizerStep
		}
		return b.w.addGrads(b.ops)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Loss implements trainer.Backend.
func (b *Backend) Loss(ctx context.Context, windows []trainer.Window) ([]trainer.WindowLoss, error) {
	out := make([]trainer.WindowLoss, len(windows))
	err := b.dev.Do(func(x *device.Exec) error {
		if err := b.syncForEval(); err != nil {
			return err
		}
		for i, w := range windows {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := b.runWindow(x, w, runOpts{})
			if err != nil {
				return fmt.Errorf("window %d: %w", i, err)
			}
			out[i] = r.loss
		}
		return nil
	})
	return out, err
}

// Logits implements trainer.Backend.
func (b *Backend) Logits(ctx context.Context, w trainer.Window) ([]float32, error) {
	var logits []float32
	err := b.dev.Do(func(x *device.Exec) error {
		if err := b.syncForEval(); err != nil {
			return err
		}
		r, err := b.runWindow(x, w, runOpts{logits: true})
		logits = r.logits
		return err
	})
	return logits, err
}

// syncForEval uploads the host adapter for Loss and Logits unless the device optimizer
// owns it (then the bf16 copies are already current).
func (b *Backend) syncForEval() error {
	if b.dopt != nil {
		return nil
	}
	return b.w.syncLoRA(b.ops, false)
}

// mix derives an independent 64-bit stream id (splitmix64 finalizer), as the reference backend.
func mix(a, b uint64) uint64 {
	z := a ^ (b+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

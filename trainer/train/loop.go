package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/sft"
)

// Options are the parts of a run that are not configuration.
type Options struct {
	Backends map[string]trainer.Factory
	Logger   *slog.Logger
	// OnRecord is called for every metrics record (progress lines, job events).
	OnRecord func(Record)
}

// Result summarizes a finished run.
type Result struct {
	Steps           int     `json:"steps"`
	FinalLoss       float64 `json:"final_loss"`
	BestValLoss     float64 `json:"best_val_loss,omitempty"`
	BestStep        int     `json:"best_step,omitempty"`
	ProcessedTokens int64   `json:"processed_supervised_tokens"`
	Resumed         bool    `json:"resumed"`
	ResumedFrom     int     `json:"resumed_from,omitempty"`
}

// BestDir holds the adapter with the lowest validation loss.
func BestDir(out string) string { return filepath.Join(out, "best") }

// Run trains, resuming from the latest checkpoint in cfg.Out when there is
// one. Cancelling ctx stops after the current step with a checkpoint.
//
// The run folder holds run.json (the config; a resume must match it),
// metrics.jsonl (one Record per step and per validation), checkpoints/
// step-NNNNNN/{adapter,optimizer}.safetensors + state.json with
// checkpoints/latest naming the newest, best/adapter.safetensors +
// best.json (lowest validation loss) and result.json when finished.
func Run(ctx context.Context, cfg Config, o Options) (Result, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	factory, ok := o.Backends[cfg.Backend]
	if !ok {
		return Result{}, fmt.Errorf("backend %q is not built into this binary (a CUDA build needs -tags masscuda)", cfg.Backend)
	}
	rows, err := ReadRows(cfg.Data)
	if err != nil {
		return Result{}, err
	}
	var val []sft.Row
	if cfg.Val != "" {
		if val, err = ReadRows(cfg.Val); err != nil {
			return Result{}, err
		}
		if cfg.MaxVal > 0 && len(val) > cfg.MaxVal {
			val = val[:cfg.MaxVal]
		}
	}
	m, err := model.Load(cfg.Model)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return Result{}, fmt.Errorf("create run folder: %w", err)
	}
	resume, err := writeRunConfig(&cfg)
	if err != nil {
		return Result{}, err
	}
	adapter, err := lora.New(cfg.LoRA, m.Config, cfg.Seed)
	if err != nil {
		return Result{}, err
	}
	opt := optim.NewAdamW(cfg.Optim, adapter)
	st := State{}
	res := Result{}
	if resume {
		s, ok, err := loadLatest(cfg.Out, adapter, opt)
		if err != nil {
			return Result{}, fmt.Errorf("resume %s: %w", cfg.Out, err)
		}
		if ok {
			st = s
			res.Resumed, res.ResumedFrom = true, s.Step
			log.Info("resuming", "step", s.Step, "out", cfg.Out)
		}
	}
	be, err := factory(m, adapter)
	if err != nil {
		return Result{}, fmt.Errorf("start %s backend: %w", cfg.Backend, err)
	}
	defer be.Close()
	upd, err := newUpdater(be, adapter, opt)
	if err != nil {
		return Result{}, err
	}
	sampler := sft.NewSampler(rows, int64(cfg.Seed))
	for sampler.Drawn() < st.Drawn {
		sampler.Next()
	}
	ml, err := openMetrics(cfg.Out, st.Step)
	if err != nil {
		return Result{}, err
	}
	defer ml.Close()
	emit := func(r Record) error {
		if o.OnRecord != nil {
			o.OnRecord(r)
		}
		return ml.write(r)
	}
	start := time.Now()
	base := st.ElapsedSec
	startStep := st.Step
	var lastLoss float64
	for st.Step < cfg.Steps {
		if err := ctx.Err(); err != nil {
			st.ElapsedSec = base + time.Since(start).Seconds()
			if st.Step > startStep {
				if cerr := upd.save(func() error { return saveCheckpoint(cfg.Out, st, adapter, opt) }); cerr != nil {
					return res, errors.Join(err, cerr)
				}
			}
			return res, fmt.Errorf("stopped at step %d (checkpoint saved; rerun the same command to resume): %w", st.Step, err)
		}
		adapter.ZeroGrad()
		scale := 1 / float64(cfg.Batch*cfg.Accum)
		var sum float64
		var seen, sup int64
		counted := 0
		for micro := 0; micro < cfg.Accum; micro++ {
			ws := make([]trainer.Window, cfg.Batch)
			for i := range ws {
				ws[i] = Window(sampler.Next())
				seen += int64(len(ws[i].InputIDs))
			}
			seed := cfg.Seed*0x9e3779b97f4a7c15 + uint64(st.Step*cfg.Accum+micro)
			wl, err := be.ForwardBackward(ctx, trainer.Batch{Windows: ws, Seed: seed}, scale)
			if err != nil {
				return res, fmt.Errorf("step %d: %w", st.Step+1, err)
			}
			for _, l := range wl {
				if l.Tokens > 0 {
					sum += l.Loss
					counted++
				}
				sup += int64(l.Tokens)
			}
		}
		// The logged loss averages windows that have supervised tokens; the
		// gradient scale above counts every drawn window, as Hugging Face does.
		loss := sum / math.Max(1, float64(counted))
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return res, fmt.Errorf("step %d: loss is %v; lower the learning rate", st.Step+1, loss)
		}
		lr := cfg.Optim.LRAt(st.Step)
		norm, err := upd.step(ctx, lr)
		if err != nil {
			return res, err
		}
		st.Step++
		st.Drawn = sampler.Drawn()
		st.ProcessedTokens += sup
		st.SeenTokens += seen
		lastLoss = loss
		el := time.Since(start).Seconds()
		done := st.Step - startStep
		tokS := 0.0
		if el > 0 {
			tokS = float64(seen) / (el / float64(done))
		}
		rec := Record{Step: st.Step, Steps: cfg.Steps, Loss: &loss, LR: lr, GradNorm: norm, ProcessedTokens: st.ProcessedTokens,
			TokensPerSec: tokS, ElapsedSec: base + el, ETASec: el / float64(done) * float64(cfg.Steps-st.Step)}
		if err := emit(rec); err != nil {
			return res, fmt.Errorf("write metrics: %w", err)
		}
		last := st.Step == cfg.Steps
		if len(val) > 0 && cfg.ValEvery > 0 && (st.Step%cfg.ValEvery == 0 || last) {
			ev, err := Evaluate(ctx, be, val)
			if err != nil {
				return res, fmt.Errorf("validate at step %d: %w", st.Step, err)
			}
			vl := ev.Loss
			if err := emit(Record{Step: st.Step, Steps: cfg.Steps, ValLoss: &vl, ProcessedTokens: st.ProcessedTokens, ElapsedSec: base + time.Since(start).Seconds()}); err != nil {
				return res, err
			}
			if st.BestStep == 0 || vl < st.BestVal {
				st.BestVal, st.BestStep = vl, st.Step
				if err := upd.save(func() error { return saveBest(cfg.Out, adapter, st) }); err != nil {
					return res, err
				}
			}
		}
		if (cfg.CkptEvery > 0 && st.Step%cfg.CkptEvery == 0) || last {
			st.ElapsedSec = base + time.Since(start).Seconds()
			if err := upd.save(func() error { return saveCheckpoint(cfg.Out, st, adapter, opt) }); err != nil {
				return res, err
			}
			if err := pruneCheckpoints(cfg.Out, cfg.Keep); err != nil {
				return res, err
			}
		}
	}
	res.Steps, res.FinalLoss, res.ProcessedTokens = st.Step, lastLoss, st.ProcessedTokens
	if st.BestStep > 0 {
		res.BestValLoss, res.BestStep = st.BestVal, st.BestStep
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	return res, writeAtomic(filepath.Join(cfg.Out, "result.json"), append(b, '\n'))
}

func saveBest(out string, a *lora.Adapter, st State) error {
	dir := BestDir(out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create best folder: %w", err)
	}
	if err := a.Save(filepath.Join(dir, "adapter.safetensors"), "", nil); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(map[string]any{"step": st.Step, "val_loss": st.BestVal}, "", "  ")
	return writeAtomic(filepath.Join(dir, "best.json"), append(b, '\n'))
}

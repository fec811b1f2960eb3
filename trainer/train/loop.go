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
	r, err := openRun(cfg, o)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	var lastLoss float64
	for r.st.Step < cfg.Steps {
		if err := ctx.Err(); err != nil {
			return r.res, r.interrupted(err)
		}
		loss, err := r.step(ctx)
		if err != nil {
			return r.res, err
		}
		lastLoss = loss
		if err := r.afterStep(ctx); err != nil {
			return r.res, err
		}
	}
	res, st := r.res, r.st
	res.Steps, res.FinalLoss, res.ProcessedTokens = st.Step, lastLoss, st.ProcessedTokens
	if st.BestStep > 0 {
		res.BestValLoss, res.BestStep = st.BestVal, st.BestStep
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	return res, writeAtomic(filepath.Join(cfg.Out, "result.json"), append(b, '\n'))
}

// run is one training run's live state between openRun and close.
type run struct {
	cfg       Config
	o         Options
	val       []sft.Row
	adapter   *lora.Adapter
	opt       *optim.AdamW
	be        trainer.Backend
	upd       *updater // host or device optimizer step
	sampler   *sft.Sampler
	ml        *metricsLog
	expo      *metricsLog // exposure.jsonl
	st        State
	res       Result
	start     time.Time
	base      float64 // seconds spent before this process resumed
	startStep int
}

// openRun checks the config, loads data and model, writes or checks
// run.json, restores the latest checkpoint and starts the backend.
func openRun(cfg Config, o Options) (*run, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	factory, ok := o.Backends[cfg.Backend]
	if !ok {
		return nil, fmt.Errorf("backend %q is not built into this binary (a CUDA build needs -tags masscuda)", cfg.Backend)
	}
	rows, val, err := readRunRows(cfg)
	if err != nil {
		return nil, err
	}
	m, err := model.Load(cfg.Model)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return nil, fmt.Errorf("create run folder: %w", err)
	}
	resume, err := writeRunConfig(&cfg)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, o: o, val: val}
	if r.adapter, err = lora.New(cfg.LoRA, m.Config, cfg.Seed); err != nil {
		return nil, err
	}
	r.opt = optim.NewAdamW(cfg.Optim, r.adapter)
	if resume {
		if err := r.resume(); err != nil {
			return nil, err
		}
	}
	if r.be, err = factory(m, r.adapter); err != nil {
		return nil, fmt.Errorf("start %s backend: %w", cfg.Backend, err)
	}
	if r.upd, err = newUpdater(r.be, r.adapter, r.opt); err != nil {
		r.be.Close()
		return nil, err
	}
	r.sampler = sft.NewSampler(rows, int64(cfg.Seed))
	for r.sampler.Drawn() < r.st.Drawn {
		r.sampler.Next()
	}
	if r.ml, err = openMetrics(cfg.Out, r.st.Step); err != nil {
		r.be.Close()
		return nil, err
	}
	if r.expo, err = openStepLog(filepath.Join(cfg.Out, ExposureFile), r.st.Step); err != nil {
		r.ml.Close()
		r.be.Close()
		return nil, err
	}
	r.start, r.base, r.startStep = time.Now(), r.st.ElapsedSec, r.st.Step
	return r, nil
}

// readRunRows reads the training rows and at most MaxVal validation rows.
func readRunRows(cfg Config) (rows, val []sft.Row, err error) {
	if rows, err = ReadRows(cfg.Data); err != nil {
		return nil, nil, err
	}
	if cfg.Val != "" {
		if val, err = ReadRows(cfg.Val); err != nil {
			return nil, nil, err
		}
		if cfg.MaxVal > 0 && len(val) > cfg.MaxVal {
			val = val[:cfg.MaxVal]
		}
	}
	return rows, val, nil
}

// resume restores the adapter, optimizer and state of the newest checkpoint.
func (r *run) resume() error {
	s, ok, err := loadLatest(r.cfg.Out, r.adapter, r.opt)
	if err != nil {
		return fmt.Errorf("resume %s: %w", r.cfg.Out, err)
	}
	if ok {
		r.st = s
		r.res.Resumed, r.res.ResumedFrom = true, s.Step
		r.o.Logger.Info("resuming", "step", s.Step, "out", r.cfg.Out)
	}
	return nil
}

func (r *run) close() {
	r.ml.Close()
	r.expo.Close()
	r.be.Close()
}

func (r *run) emit(rec Record) error {
	if r.o.OnRecord != nil {
		r.o.OnRecord(rec)
	}
	return r.ml.write(rec)
}

func (r *run) elapsed() float64 { return r.base + time.Since(r.start).Seconds() }

// interrupted saves a checkpoint when this process made progress and says
// how to resume.
func (r *run) interrupted(cause error) error {
	r.st.ElapsedSec = r.elapsed()
	if r.st.Step > r.startStep {
		if err := r.upd.save(func() error { return saveCheckpoint(r.cfg.Out, r.st, r.adapter, r.opt) }); err != nil {
			return errors.Join(cause, err)
		}
	}
	return fmt.Errorf("stopped at step %d (checkpoint saved; rerun the same command to resume): %w", r.st.Step, cause)
}

// step runs one optimizer step over Batch×Accum windows and logs it. Each
// window's loss is the mean over its supervised tokens; the gradients are
// summed with scale 1/(Batch×Accum), so the step follows the mean of the
// window losses.
func (r *run) step(ctx context.Context) (float64, error) {
	cfg := r.cfg
	r.adapter.ZeroGrad()
	scale := 1 / float64(cfg.Batch*cfg.Accum)
	var sum float64
	var seen, sup int64
	counted := 0
	expo := Exposure{Step: r.st.Step + 1, Rows: make([]Drawn, 0, cfg.Batch*cfg.Accum)}
	for micro := 0; micro < cfg.Accum; micro++ {
		ws := make([]trainer.Window, cfg.Batch)
		for i := range ws {
			k, row := r.sampler.NextIndexed()
			ws[i] = Window(row)
			expo.Rows = append(expo.Rows, drawn(k, row))
			seen += int64(len(ws[i].InputIDs))
		}
		seed := cfg.Seed*0x9e3779b97f4a7c15 + uint64(r.st.Step*cfg.Accum+micro)
		wl, err := r.be.ForwardBackward(ctx, trainer.Batch{Windows: ws, Seed: seed}, scale)
		if err != nil {
			return 0, fmt.Errorf("step %d: %w", r.st.Step+1, err)
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
		return 0, fmt.Errorf("step %d: loss is %v; lower the learning rate", r.st.Step+1, loss)
	}
	lr := cfg.Optim.LRAt(r.st.Step)
	norm, err := r.upd.step(ctx, lr)
	if err != nil {
		return 0, err
	}
	r.st.Step++
	r.st.Drawn = r.sampler.Drawn()
	r.st.ProcessedTokens += sup
	r.st.SeenTokens += seen
	if err := r.expo.write(expo); err != nil {
		return 0, fmt.Errorf("write exposure: %w", err)
	}
	return loss, r.logStep(loss, lr, norm, seen)
}

// logStep emits the step's metrics record with throughput and ETA.
func (r *run) logStep(loss, lr, norm float64, seen int64) error {
	el := time.Since(r.start).Seconds()
	done := r.st.Step - r.startStep
	tokS := 0.0
	if el > 0 {
		tokS = float64(seen) / (el / float64(done))
	}
	rec := Record{Step: r.st.Step, Steps: r.cfg.Steps, Loss: &loss, LR: lr, GradNorm: norm, ProcessedTokens: r.st.ProcessedTokens,
		TokensPerSec: tokS, ElapsedSec: r.base + el, ETASec: el / float64(done) * float64(r.cfg.Steps-r.st.Step)}
	if err := r.emit(rec); err != nil {
		return fmt.Errorf("write metrics: %w", err)
	}
	return nil
}

// afterStep validates (keeping the best adapter) and checkpoints when due.
func (r *run) afterStep(ctx context.Context) error {
	cfg, last := r.cfg, r.st.Step == r.cfg.Steps
	if len(r.val) > 0 && cfg.ValEvery > 0 && (r.st.Step%cfg.ValEvery == 0 || last) {
		if err := r.validate(ctx); err != nil {
			return err
		}
	}
	if (cfg.CkptEvery > 0 && r.st.Step%cfg.CkptEvery == 0) || last {
		r.st.ElapsedSec = r.elapsed()
		if err := r.upd.save(func() error { return saveCheckpoint(cfg.Out, r.st, r.adapter, r.opt) }); err != nil {
			return err
		}
		if err := pruneCheckpoints(cfg.Out, cfg.Keep); err != nil {
			return err
		}
	}
	return nil
}

// validate logs the validation loss and saves best/ when it is the lowest.
func (r *run) validate(ctx context.Context) error {
	ev, err := Evaluate(ctx, r.be, r.val)
	if err != nil {
		return fmt.Errorf("validate at step %d: %w", r.st.Step, err)
	}
	vl := ev.Loss
	if err := r.emit(Record{Step: r.st.Step, Steps: r.cfg.Steps, ValLoss: &vl, ProcessedTokens: r.st.ProcessedTokens, ElapsedSec: r.elapsed(),
		ValTokens: ev.SupervisedTokens, ValByRole: ev.ByRole, ValByTask: ev.ByTask, ValPerEpisode: ev.PerEpisode}); err != nil {
		return err
	}
	if r.st.BestStep == 0 || vl < r.st.BestVal {
		r.st.BestVal, r.st.BestStep = vl, r.st.Step
		if err := r.upd.save(func() error { return saveBest(r.cfg.Out, r.adapter, r.st) }); err != nil {
			return err
		}
	}
	return nil
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

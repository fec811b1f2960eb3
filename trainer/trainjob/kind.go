package trainjob

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
	"github.com/mass-dev/mass/trainer/train"
)

// KindName is the job kind.
const KindName = jobwire.TrainKind

// StopGrace is how long mass-train gets after SIGTERM to checkpoint and exit.
const StopGrace = 60 * time.Second

// Runner runs mass-train: what the train kind and the generation's stages
// need from massd (services.Services embeds it).
type Runner interface {
	// TrainCommand is mass-train with args for a run that writes out,
	// made by Command with massd's binary. The caller sets the output
	// streams, runs cmd and then calls release.
	TrainCommand(ctx context.Context, out string, log *slog.Logger, args ...string) (cmd *exec.Cmd, release func(), err error)
}

// Binary is a Runner on one mass-train binary (empty: mass-train next to
// the running executable, else on PATH).
type Binary string

// TrainCommand is Command on b.
func (b Binary) TrainCommand(ctx context.Context, out string, log *slog.Logger, args ...string) (*exec.Cmd, func(), error) {
	bin := string(b)
	if bin == "" {
		var err error
		if bin, err = FindBinary(); err != nil {
			return nil, nil, err
		}
	}
	return Command(ctx, bin, out, log, args...)
}

// Kind returns the "train" job kind running mass-train through r.
func Kind(r Runner) jobkind.Kind {
	return jobkind.Kind{
		Name:        KindName,
		Description: `LoRA SFT with mass-train (params {"model","data","val","steps",...}); resumes from its checkpoints`,
		OnInterrupt: jobkind.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := ParseParams(raw); return err },
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			return run(ctx, r, job, rep)
		},
	}
}

// Run runs one mass-train command that writes out through r and waits for
// it; a failure carries the start of its stderr.
func Run(ctx context.Context, r Runner, log *slog.Logger, out string, args ...string) error {
	cmd, release, err := r.TrainCommand(ctx, out, log, args...)
	if err != nil {
		return err
	}
	defer release()
	var tail strings.Builder
	cmd.Stderr = &capped{w: &tail, n: 8 << 10}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("mass-train %s: %w: %s", args[0], err, strings.TrimSpace(tail.String()))
	}
	return nil
}

// capped keeps the first n bytes written to it.
type capped struct {
	w *strings.Builder
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.w.Len(); room > 0 {
		c.w.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// FindBinary locates mass-train.
func FindBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "mass-train")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath("mass-train")
	if err != nil {
		return "", fmt.Errorf("mass-train not found next to massd or on PATH: %w", err)
	}
	return p, nil
}

func run(ctx context.Context, r Runner, job jobkind.Job, rep jobkind.Reporter) error {
	p, err := ParseParams(job.Params)
	if err != nil {
		return err
	}
	name := p.Name
	if name == "" {
		name = job.ID
	}
	out := job.Layout.Run(name)
	if job.Attempt > 1 {
		rep.Event("resume", fmt.Sprintf("attempt %d resumes %s from its latest checkpoint", job.Attempt, out), map[string]any{"out": out})
	}
	cmd, release, err := r.TrainCommand(ctx, out, rep.Logger(), p.Args(job.Layout, out)...)
	if err != nil {
		return err
	}
	defer release()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("mass-train stdout: %w", err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fmt.Errorf("mass-train stderr: %w", err)
	}
	rep.Event("start", "mass-train "+out, map[string]any{"out": out, "binary": cmd.Path})
	rep.Progress(jobkind.Progress{Stage: "starting", Message: out})
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mass-train: %w", err)
	}
	tail := make(chan string, 1)
	go func() { tail <- lastLines(stderr, 20, rep) }()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var other []string // stdout lines that are not records, e.g. a driver's start-up error
	for sc.Scan() {
		var r train.Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			if other = append(other, sc.Text()); len(other) > 5 {
				other = other[1:]
			}
			continue
		}
		report(rep, r)
	}
	if err := sc.Err(); err != nil {
		rep.Logger().Warn("read mass-train stdout", "err", err)
		io.Copy(io.Discard, stdout) // never leave the child blocked on a full pipe
	}
	errTail := <-tail
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("mass-train: %w: %s", err, strings.TrimSpace(strings.Join(other, "\n")+"\n"+errTail))
	}
	var res train.Result
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		return fmt.Errorf("read run result: %w", err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return fmt.Errorf("parse run result: %w", err)
	}
	rep.SetResult(map[string]any{"out": out, "result": res})
	rep.Event("done", fmt.Sprintf("trained %d steps, final loss %.4f", res.Steps, res.FinalLoss), map[string]any{"out": out})
	return nil
}

func report(rep jobkind.Reporter, r train.Record) {
	if r.ValLoss != nil {
		rep.Event("validation", fmt.Sprintf("step %d val_loss %.4f", r.Step, *r.ValLoss),
			map[string]any{"step": r.Step, "val_loss": *r.ValLoss})
		return
	}
	rep.Progress(jobkind.Progress{Stage: "train", Message: train.ProgressLine(r), Counters: map[string]int64{
		"step": int64(r.Step), "steps": int64(r.Steps), "processed_supervised_tokens": r.ProcessedTokens}})
	if r.Step%50 == 0 || r.Step == r.Steps {
		loss := 0.0
		if r.Loss != nil {
			loss = *r.Loss
		}
		rep.Event("step", train.ProgressLine(r), map[string]any{"step": r.Step, "loss": loss, "lr": r.LR})
	}
}

// lastLines drains r (mass-train's stderr: progress lines and logs) and
// returns its last n lines for an error message.
func lastLines(r io.Reader, n int, rep jobkind.Reporter) string {
	defer io.Copy(io.Discard, r) // never leave the child blocked on a full pipe
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var lines []string
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, os.ErrClosed) {
		rep.Logger().Warn("read mass-train stderr", "err", err)
	}
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

// PickBinary chooses the trainer for this host: the CUDA build when one is
// configured and an NVIDIA GPU device node (/dev/nvidia0, …) is present, else
// the CPU build (empty means mass-train next to massd, else on PATH).
// /dev/nvidiactl alone is not enough: driver packages create it on hosts
// without a GPU.
func PickBinary(cpuBinary, cudaBinary string) string {
	if cudaBinary != "" {
		if gpus, _ := filepath.Glob("/dev/nvidia[0-9]*"); len(gpus) > 0 {
			if st, err := os.Stat(cudaBinary); err == nil && st.Mode().IsRegular() {
				return cudaBinary
			}
		}
	}
	if st, err := os.Stat(cpuBinary); err != nil || !st.Mode().IsRegular() {
		return "" // FindBinary then looks next to massd and on PATH
	}
	return cpuBinary
}

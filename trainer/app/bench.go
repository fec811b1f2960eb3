package app

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
	"github.com/urfave/cli/v2"
)

func (r *runner) benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "measure training and evaluation tokens/s and peak RSS on a random preset model",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Value: "tiny", Usage: "presets, comma-separated (tiny, micro)"},
			&cli.StringFlag{Name: "seq", Value: "64,256", Usage: "window lengths, comma-separated"},
			&cli.IntFlag{Name: "iters", Value: 3, Usage: "timed windows per row"},
			&cli.IntFlag{Name: "rank", Value: 8},
			r.backendFlag(),
		},
		Action: func(c *cli.Context) error {
			f, err := r.pickBackend(c.String("backend"))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "model\tparams\tlora\tseq\ttrain tok/s\ttrain tok/cpu-s\teval tok/s\teval tok/cpu-s\tpeak RSS MiB\t")
			for _, preset := range strings.Split(c.String("config"), ",") {
				cfg, err := model.Preset(preset)
				if err != nil {
					return err
				}
				m := model.NewRandom(cfg, 1)
				a, err := lora.New(lora.Config{Rank: c.Int("rank"), Alpha: float64(2 * c.Int("rank")), Dropout: 0.05, Targets: lora.Modules}, cfg, 1)
				if err != nil {
					return err
				}
				be, err := f(m, a)
				if err != nil {
					return err
				}
				params := 0
				for _, t := range m.Tensors {
					params += len(t.Data)
				}
				for _, s := range strings.Split(c.String("seq"), ",") {
					var seq int
					if _, err := fmt.Sscan(s, &seq); err != nil || seq < 2 {
						return fmt.Errorf("--seq %q: want lengths >= 2", s)
					}
					w := benchWindow(seq, cfg.VocabSize)
					r, err := timeBackend(be, w, c.Int("iters"))
					if err != nil {
						return err
					}
					fmt.Fprintf(tw, "%s\t%.2fM\t%.2fM\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t\n", preset, float64(params)/1e6, float64(a.NumParams())/1e6,
						seq, r.train, r.trainCPU, r.eval, r.evalCPU, peakRSSMiB())
				}
				be.Close()
			}
			return tw.Flush()
		},
	}
}

func benchWindow(seq, vocab int) trainer.Window {
	rng := rand.New(rand.NewPCG(7, 7))
	w := trainer.Window{InputIDs: make([]int32, seq), Labels: make([]int32, seq)}
	for i := range w.InputIDs {
		w.InputIDs[i] = int32(rng.IntN(vocab))
		w.Labels[i] = w.InputIDs[i]
		if i < seq/4 {
			w.Labels[i] = trainer.IgnoreIndex
		}
	}
	return w
}

type rates struct{ train, trainCPU, eval, evalCPU float64 }

// cpuSeconds is the process's user+system time; tokens per CPU-second stays
// meaningful on a machine shared with other work, where wall time does not.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func timeBackend(be trainer.Backend, w trainer.Window, iters int) (rates, error) {
	ctx := context.Background()
	// One untimed warm-up window.
	if _, err := be.ForwardBackward(ctx, trainer.Batch{Windows: []trainer.Window{w}}, 1); err != nil {
		return rates{}, err
	}
	toks := float64(iters * len(w.InputIDs))
	var r rates
	t0, c0 := time.Now(), cpuSeconds()
	for i := 0; i < iters; i++ {
		if _, err := be.ForwardBackward(ctx, trainer.Batch{Windows: []trainer.Window{w}, Seed: uint64(i)}, 1); err != nil {
			return rates{}, err
		}
	}
	r.train, r.trainCPU = toks/time.Since(t0).Seconds(), toks/(cpuSeconds()-c0)
	t0, c0 = time.Now(), cpuSeconds()
	for i := 0; i < iters; i++ {
		if _, err := be.Loss(ctx, []trainer.Window{w}); err != nil {
			return rates{}, err
		}
	}
	r.eval, r.evalCPU = toks/time.Since(t0).Seconds(), toks/(cpuSeconds()-c0)
	return r, nil
}

// peakRSSMiB reads the process's high-water resident set (VmHWM).
func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, "VmHWM:"), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}

package cyclefile

import (
	"fmt"
	"io"
	"strings"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/optim"
	"github.com/mass-dev/mass/trainer/sft"
	"github.com/mass-dev/mass/trainer/train"
)

// Specs are the splits of the tasks massd has (id → its spec's split);
// nil when massd could not be asked.
type Specs map[string]string

// CheckSpecs refuses a task whose list disagrees with its spec's split,
// naming both.
func (f *File) CheckSpecs(specs Specs) error {
	for _, l := range []struct {
		name string
		ids  []string
	}{{"train", f.Tasks.Train}, {"test", f.Tasks.Test}, {"excluded", f.Tasks.Excluded}} {
		for _, id := range l.ids {
			split, ok := specs[id]
			if !ok {
				continue
			}
			if split == "" {
				split = "train"
			}
			if split != l.name {
				return fmt.Errorf("task %s: the config lists it in tasks.%s but its spec says split: %s", id, l.name, split)
			}
		}
	}
	return nil
}

// WritePlan prints what the cycle will run, from the file alone: tasks per
// split (marked when massd does not have them), and per generation the
// episodes, judgments, training steps and windows per step.
func (f *File) WritePlan(w io.Writer, r Resolved, specs Specs) {
	p := r.Cycle.GenerationParams
	parent := p.Model
	if parent == "" {
		parent = "massd's default model"
	}
	fmt.Fprintf(w, "cycle: %d generation(s) from %s\n", f.Count, parent)
	if specs == nil {
		fmt.Fprintln(w, "tasks (massd not asked: whether they are added is not checked):")
	} else {
		fmt.Fprintln(w, "tasks:")
	}
	for _, l := range []struct {
		name string
		ids  []string
	}{{"train", f.Tasks.Train}, {"test", f.Tasks.Test}, {"excluded", f.Tasks.Excluded}} {
		var marked []string
		for _, id := range l.ids {
			if _, ok := specs[id]; specs != nil && !ok {
				id += " (not added)"
			}
			marked = append(marked, id)
		}
		fmt.Fprintf(w, "  %-8s %d: %s\n", l.name, len(l.ids), strings.Join(marked, ", "))
	}
	it := r.Cycle.SearchIterations
	if it == 0 {
		it = 11
	}
	fmt.Fprintf(w, "search: %d iterations per task, %s\n", it, judging(r.Cycle))
	if r.Directive != "" {
		fmt.Fprintf(w, "teacher directive: %d bytes\n", len(r.Directive))
	}
	for _, s := range r.Rounds {
		gp, err := generation.ForGeneration(r.Cycle, s.G)
		if err != nil {
			fmt.Fprintf(w, "generation %d: %v\n", s.G, err)
			continue
		}
		writeRound(w, s.G, gp, len(f.Tasks.Train), r.Cycle)
	}
}

func judging(c generation.CycleParams) string {
	n, mode := c.SearchJudgments, c.SearchJudgeMode
	if n == 0 {
		n = 1
	}
	if mode == "" {
		mode = "bundle"
	}
	return fmt.Sprintf("%d judgment(s) per comparison (%s mode)", n, mode)
}

// writeRound prints one generation's sizes, defaults filled in.
func writeRound(w io.Writer, g int, p generation.Params, tasks int, c generation.CycleParams) {
	cfg := generation.Config{Episodes: p.Episodes, MinSuccess: p.MinSuccess, Cap: p.Cap, Opponents: p.Opponents,
		Train: p.Train, Val: p.Val, G: g}
	cfg.Defaults()
	name := strings.ReplaceAll(p.ServedName, "{g}", fmt.Sprint(g))
	if name == "" {
		name = cfg.NewModel
	}
	rankSeed := p.RankSeed
	if rankSeed == 0 {
		rankSeed = p.Seed
	}
	fmt.Fprintf(w, "generation %d → %s:\n", g, name)
	fmt.Fprintf(w, "  collection: %d episodes per task (top-ups to %d runs while fewer than %d are eligible) = %d episodes; seed base %d\n",
		cfg.Episodes, cfg.Cap, cfg.MinSuccess, cfg.Episodes*tasks, generation.GenerationSeed(p.Seed, g))
	perTask := cfg.Episodes * min(cfg.Opponents, cfg.Episodes-1) / 2
	fmt.Fprintf(w, "  ranking: ring of %d opponents, %d judgments per task when all %d are eligible = %d judgments; Bradley–Terry; ranks 1–%d train, %d–%d validate; seed base %d\n",
		cfg.Opponents, perTask, cfg.Episodes, perTask*tasks, cfg.Train, cfg.Train+1, cfg.Train+cfg.Val, generation.GenerationSeed(rankSeed, g))
	if g == 1 && c.SearchSeed != 0 {
		fmt.Fprintf(w, "  search seeds: %d + task index (moved by %d per generation)\n", c.SearchSeed, generation.SeedStride)
	}
	writeTraining(w, p)
}

func writeTraining(w io.Writer, p generation.Params) {
	r := generation.Recipe{}
	if p.Training != nil {
		r = *p.Training
	}
	steps := p.TrainSteps
	if steps == 0 {
		steps = train.DefaultSteps
	}
	wps := r.WindowsPerStep
	if wps == 0 {
		wps = train.DefaultBatch * train.DefaultAccum
	}
	or := func(v, d float64) float64 {
		if v == 0 {
			return d
		}
		return v
	}
	ori := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	dropout := lora.DefaultDropout
	if r.LoRADropout != nil {
		dropout = *r.LoRADropout
	}
	targets := "the default modules"
	if len(r.Targets) > 0 {
		targets = strings.Join(r.Targets, ",")
	}
	fmt.Fprintf(w, "  training: %d steps × %d windows per step = %d windows drawn; window %d tokens, overlap %d\n",
		steps, wps, steps*wps, ori(r.Window, sft.DefaultMaxTokens), ori(r.ContextOverlap, sft.DefaultContextTokens))
	fmt.Fprintf(w, "    lr %g (warmup %d, min-lr ratio %g), LoRA r %d α %g dropout %g on %s; save every %d, validate every %d; seed %d\n",
		or(r.LR, optim.DefaultLR), ori(r.WarmupSteps, optim.DefaultWarmup), or(r.MinLRRatio, optim.DefaultFloor),
		ori(r.LoRAR, lora.DefaultRank), or(r.LoRAAlpha, lora.DefaultAlpha), dropout, targets,
		ori(r.SaveEvery, train.DefaultCkptEvery), ori(r.ValEvery, train.DefaultValEvery), max(r.Seed, train.DefaultSeed))
}

package cyclefile

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/generation"
)

// TestPaperConfig: examples/cycle-paper.yaml resolves to the reference's
// configs/paper.json values, and its generation 2 to cycle2.json's seeds.
func TestPaperConfig(t *testing.T) {
	f, err := os.Open("../../examples/cycle-paper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := file.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p := res.Cycle
	r := p.Training
	if p.Generations != 2 || len(p.Tasks) != 8 || p.Episodes != 18 || p.Train != 15 || p.Val != 1 || p.MinSuccess != 16 ||
		p.Opponents != 6 || p.RankSeed != 1234 || p.Seed != 710000 || p.SearchSeed != 450000 || p.SearchIterations != 11 ||
		p.TrainSteps != 1624 || r == nil || r.Window != 49152 || r.ContextOverlap != 8192 || r.LR != 3e-5 || r.WarmupSteps != 5 ||
		r.MinLRRatio != 0.1 || r.LoRAR != 64 || r.LoRAAlpha != 128 || *r.LoRADropout != 0.05 || r.SaveEvery != 50 ||
		r.ValEvery != 150 || r.WindowsPerStep != 3 || r.Seed != 1234 || len(r.Targets) != 10 {
		t.Errorf("paper config resolved to %+v, training %+v", p, r)
	}
	// cycle2.json: collection seed_base 1710000, search 1450000.
	if got := generation.GenerationSeed(p.Seed, 2); got != 1710000 {
		t.Errorf("generation 2 collection seed base %d", got)
	}
	if got := generation.GenerationSeed(p.SearchSeed, 2); got != 1450000 {
		t.Errorf("generation 2 search seed base %d", got)
	}
	var out bytes.Buffer
	file.WritePlan(&out, res, Specs{"query51": "train"})
	for _, want := range []string{"query53 (not added)", "query221 (not added)", "144 episodes", "432 judgments", "1624 steps × 3 windows per step",
		"generation 2 → L2", "seed base 1710000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "query51 (not added)") {
		t.Error("an added task is shown as not added")
	}
}

func parse(t *testing.T, doc string) (*File, error) {
	t.Helper()
	return Parse(strings.NewReader(doc))
}

// TestBadConfigs: each bad file is refused with the key in the message.
func TestBadConfigs(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"tasks: {train: [a], test: [a]}\n", "tasks.train and tasks.test"},
		{"tasks: {train: [a, a]}\n", "lists a twice"},
		{"tasks: {train: []}\n", "tasks.train is empty"},
		{"tasks: {train: [a]}\ncolection: {}\n", "colection"},
		{"tasks: {train: [a]}\ncollection: {train_ranks: 15, validation_rank: 17}\n", "immediately follow"},
		{"tasks: {train: [a]}\ncollection: {candidates: 10, train_ranks: 15, validation_rank: 16}\n", "below"},
		{"count: 1\ntasks: {train: [a]}\ngenerations: {2: {training: {lr: 1e-5}}}\n", "generations 1..1"},
		{"count: 2\ntasks: {train: [a]}\ngenerations: {2: {training: {lrr: 1e-5}}}\n", "training.lrr"},
		{"count: 2\ntasks: {train: [a]}\ngenerations: {2: {collection: {seed_base: 5}}}\n", "derive from the cycle's"},
		{"count: 2\ntasks: {train: [a]}\ngenerations: {2: {ranking: {opponents: 3}}}\n", "opponents 3"},
		{"tasks: {train: [a]}\ntraining: {targets: [\"q_proj;x\"]}\n", "not a module name"},
		{"", "empty"},
	} {
		f, err := parse(t, c.doc)
		if err == nil {
			_, err = f.Resolve()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
	f, err := parse(t, "tasks: {train: [a, b], test: [c]}\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSpecs(Specs{"a": "", "b": "test"}); err == nil || !strings.Contains(err.Error(), "task b: the config lists it in tasks.train but its spec says split: test") {
		t.Errorf("spec disagreement: %v", err)
	}
	if err := f.CheckSpecs(Specs{"a": "train", "c": "test"}); err != nil {
		t.Error(err)
	}
}

// TestOverridesResolve: generations.2 changes only what it names, and the
// job params carry it as per_generation.
func TestOverridesResolve(t *testing.T) {
	f, err := parse(t, "count: 3\ntasks: {train: [a]}\ncollection: {candidates: 18, train_ranks: 15, validation_rank: 16}\n"+
		"training: {steps: 100, lr: 3e-5, lora_r: 64}\ngenerations:\n  2:\n    collection: {candidates: 20}\n    training: {lr: 2e-5}\n")
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	g2, err := generation.ForGeneration(res.Cycle, 2)
	if err != nil {
		t.Fatal(err)
	}
	g3, _ := generation.ForGeneration(res.Cycle, 3)
	if g2.Episodes != 20 || g2.Train != 15 || g2.TrainSteps != 100 || g2.Training.LR != 2e-5 || g2.Training.LoRAR != 64 ||
		g3.Episodes != 18 || g3.Training.LR != 3e-5 {
		t.Errorf("generation 2 %+v %+v; generation 3 %+v %+v", g2, g2.Training, g3, g3.Training)
	}
	f.Collection.Directive = "Work as a team."
	res.Directive = f.Collection.Directive
	raw, err := res.Params(true)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m["directive"] != "Work as a team." || m["per_generation"] == nil {
		t.Errorf("params %s", raw)
	}
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("../../examples/cycle-paper.yaml")
	f.Add(string(b))
	f.Add("count: 2\ntasks: {train: [a]}\ngenerations: {2: {training: {lr: 1e-5}}}\n")
	f.Fuzz(func(t *testing.T, doc string) {
		file, err := Parse(strings.NewReader(doc))
		if err != nil {
			return
		}
		res, err := file.Resolve()
		if err != nil {
			return
		}
		var out bytes.Buffer
		file.WritePlan(&out, res, nil)
		if _, err := res.Params(true); err != nil {
			t.Fatal(err)
		}
	})
}

package cyclefile

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mass-dev/mass/cycle/generation"
)

// Resolved is a file resolved into a job's params.
type Resolved struct {
	Cycle generation.CycleParams
	// Directive is the collection's teacher directive, sent as the job
	// param "directive" when set.
	Directive string
	// PerGeneration are generations 2..G's sections after their overrides.
	Rounds []Sections
}

// Sections are one generation's collection, ranking and training.
type Sections struct {
	G          int
	Collection Collection
	Ranking    Ranking
	Training   Training
}

// Resolve turns the file into cycle params (checked as massd checks them,
// the directive aside) and each generation's sections.
func (f *File) Resolve() (Resolved, error) {
	base := Sections{G: 1, Collection: f.Collection, Ranking: f.Ranking, Training: f.Training}
	p := f.params(base)
	res := Resolved{Directive: f.Collection.Directive, Rounds: []Sections{base}}
	res.Cycle = generation.CycleParams{GenerationParams: p, Generations: f.Count, SearchIterations: f.Search.Iterations,
		SearchSeed: f.Search.SeedBase, SearchJudgments: f.Search.Judgments, SearchJudgeMode: f.Search.JudgeMode}
	for g := 2; g <= f.Count; g++ {
		s := base
		s.G = g
		if r, ok := f.Overrides[g]; ok {
			if err := r.apply(&s); err != nil {
				return res, fmt.Errorf("generations.%d: %w", g, err)
			}
			if s.Collection.Directive != f.Collection.Directive {
				return res, fmt.Errorf("generations.%d: collection.directive is the cycle's", g)
			}
			b, _ := json.Marshal(f.params(s))
			var m map[string]json.RawMessage
			_ = json.Unmarshal(b, &m)
			delete(m, "tasks")
			delete(m, "model")
			b, _ = json.Marshal(m)
			if res.Cycle.PerGeneration == nil {
				res.Cycle.PerGeneration = map[string]json.RawMessage{}
			}
			res.Cycle.PerGeneration[strconv.Itoa(g)] = b
		}
		res.Rounds = append(res.Rounds, s)
	}
	raw, _ := json.Marshal(res.Cycle)
	if _, err := generation.ParseCycleParams(raw); err != nil {
		return res, err
	}
	return res, nil
}

// Params is the cycle's params JSON with the directive, for submission.
func (r Resolved) Params(cycle bool) (json.RawMessage, error) {
	var v any = r.Cycle
	if !cycle {
		v = r.Cycle.GenerationParams
	}
	b, err := json.Marshal(v)
	if err != nil || r.Directive == "" {
		return b, err
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["directive"] = r.Directive
	return json.Marshal(m)
}

// params maps sections onto a generation's job params.
func (f *File) params(s Sections) generation.Params {
	c, t := s.Collection, s.Training
	p := generation.Params{Tasks: f.Tasks.Train, Model: f.Models.Parent, ServedName: f.Models.ServedName,
		Episodes: c.Candidates, Train: c.TrainRanks, MinSuccess: c.MinSuccess, Cap: c.Cap, Concurrency: c.Concurrency,
		Seed: c.SeedBase, Lenient: c.Lenient, Opponents: s.Ranking.Opponents, RankSeed: s.Ranking.Seed, TrainSteps: t.Steps}
	if c.ValidationRank > 0 {
		p.Val = c.ValidationRank - c.TrainRanks
		if p.MinSuccess == 0 {
			p.MinSuccess = c.ValidationRank
		}
	}
	if p.Cap == 0 && c.Candidates > generation.DefaultCap {
		p.Cap = c.Candidates
	}
	r := generation.Recipe{Window: t.Window, ContextOverlap: t.ContextOverlap, LR: t.LR, WarmupSteps: t.WarmupSteps,
		MinLRRatio: t.MinLRRatio, LoRAR: t.LoRAR, LoRAAlpha: t.LoRAAlpha, LoRADropout: t.LoRADropout, Targets: t.Targets,
		SaveEvery: t.SaveEvery, ValEvery: t.ValEvery, WindowsPerStep: t.WindowsPerStep, Seed: t.Seed}
	if !reflect.ValueOf(r).IsZero() {
		p.Training = &r
	}
	return p
}

// apply overlays the round's sections on s: only the keys it sets change.
func (r Round) apply(s *Sections) error {
	for _, sec := range []struct {
		name string
		node *yaml.Node
		into any
	}{{"collection", &r.Collection, &s.Collection}, {"ranking", &r.Ranking, &s.Ranking}, {"training", &r.Training, &s.Training}} {
		if sec.node.Kind == 0 {
			continue
		}
		if err := knownKeys(sec.node, sec.into, sec.name); err != nil {
			return err
		}
		if err := sec.node.Decode(sec.into); err != nil {
			return fmt.Errorf("%s: %w", sec.name, err)
		}
	}
	return nil
}

// knownKeys refuses a key the section's struct has no field for, and the
// seeds (a generation's seeds derive from the cycle's).
func knownKeys(n *yaml.Node, into any, section string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s must be a mapping", section)
	}
	t := reflect.TypeOf(into).Elem()
	known := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		known[strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]] = true
	}
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i].Value
		switch {
		case !known[k]:
			return fmt.Errorf("%s.%s is not a key of %s (line %d)", section, k, section, n.Content[i].Line)
		case k == "seed_base" || (section == "ranking" && k == "seed"):
			return fmt.Errorf("%s.%s: generation g's seeds derive from the cycle's (moved by (g−1)·%d); set them once at the top", section, k, generation.SeedStride)
		}
	}
	return nil
}

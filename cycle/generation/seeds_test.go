package generation

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestCycleSeedsDistinctPerGeneration runs a cycle of three generations
// and lists every collection, judge, ring and search seed by generation:
// no seed of one generation appears in another.
func TestCycleSeedsDistinctPerGeneration(t *testing.T) {
	w := &world{root: t.TempDir()}
	p := small
	p.Tasks = []string{"alpha", "beta"}
	j := job(w.root, CycleKindName, CycleParams{GenerationParams: p, Generations: 3})
	if err := NewCycleKind(w).Run(context.Background(), j, &reporter{}); err != nil {
		t.Fatal(err)
	}
	gen := map[string]int{"base": 1, "gen-1": 2, "gen-2": 3}
	seeds := map[string]map[int]bool{} // "kind seed" → generations
	add := func(kind string, seed string, g int) {
		k := kind + " " + seed
		if seeds[k] == nil {
			seeds[k] = map[int]bool{}
		}
		seeds[k][g] = true
	}
	for _, l := range w.calls() {
		f := strings.Fields(l)
		var seed, model string
		for _, x := range f {
			if v, ok := strings.CutPrefix(x, "seed="); ok {
				seed = v
			}
			if v, ok := strings.CutPrefix(x, "model="); ok {
				model = v
			}
		}
		switch {
		case (f[0] == "episode" || f[0] == "judge") && seed != "":
			add(f[0], seed, gen[model])
		case f[0] == "search":
			add("search", seed, gen[f[3]])
		}
	}
	for g := 1; g <= 3; g++ {
		for _, task := range p.Tasks {
			var r Ranked
			if ok, err := readJSON(filepath.Join(w.root, "generations", fmt.Sprint(g), RankDir, task, "ranking.json"), &r); !ok || err != nil {
				t.Fatalf("ranking of %s in generation %d: %v", task, g, err)
			}
			add("ring", fmt.Sprint(r.RingSeed), g)
		}
	}
	perKind := map[string]int{}
	var shared []string
	for k, gs := range seeds {
		perKind[strings.Fields(k)[0]]++
		if len(gs) > 1 {
			shared = append(shared, k)
		}
	}
	sort.Strings(shared)
	t.Logf("distinct seeds by kind over 3 generations: %v", perKind)
	if len(shared) > 0 {
		t.Errorf("seeds shared by generations: %v", shared)
	}
	if perKind["episode"] < 3*2*8 || perKind["ring"] != 6 || perKind["search"] != 6 || perKind["judge"] == 0 {
		t.Errorf("seeds listed: %v", perKind)
	}
}

package rank

import (
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// slowFit is the paper's MM written another way: 256-bit floats, strengths
// keyed by id, and every round walks the raw match list (no pair counts).
func slowFit(ids []string, matches []Match, iterations int, prior float64) map[string]float64 {
	const prec = 256
	f := func(x float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }
	one, half, pr := f(1), f(0.5), f(prior)
	p := make(map[string]*big.Float)
	for _, id := range ids {
		p[id] = f(1)
	}
	for it := 0; it < iterations; it++ {
		num := make(map[string]*big.Float)
		den := make(map[string]*big.Float)
		for _, id := range ids {
			num[id] = f(prior)
			den[id] = new(big.Float).SetPrec(prec).Quo(pr, new(big.Float).SetPrec(prec).Add(p[id], one))
		}
		for _, m := range matches {
			share := new(big.Float).SetPrec(prec).Quo(one, new(big.Float).SetPrec(prec).Add(p[m.A], p[m.B]))
			den[m.A].Add(den[m.A], share)
			den[m.B].Add(den[m.B], share)
			switch m.Winner {
			case AWins:
				num[m.A].Add(num[m.A], one)
			case BWins:
				num[m.B].Add(num[m.B], one)
			case Tie:
				num[m.A].Add(num[m.A], half)
				num[m.B].Add(num[m.B], half)
			}
		}
		total := f(0)
		next := make(map[string]*big.Float)
		for _, id := range ids {
			next[id] = new(big.Float).SetPrec(prec).Quo(num[id], den[id])
			total.Add(total, next[id])
		}
		mean := new(big.Float).SetPrec(prec).Quo(total, f(float64(len(ids))))
		for _, id := range ids {
			p[id] = new(big.Float).SetPrec(prec).Quo(next[id], mean)
		}
	}
	out := make(map[string]float64)
	for id, v := range p {
		out[id], _ = v.Float64()
	}
	return out
}

// randomTournament is a ring over n episodes with judgments drawn from
// hidden qualities, ties with probability tie.
func randomTournament(r *rand.Rand, n, k int, tie float64) ([]string, []Match) {
	ids := Names(n)
	q := make(map[string]float64)
	for _, id := range ids {
		q[id] = r.NormFloat64()
	}
	pairs, err := Ring(ids, k, r.Uint64())
	if err != nil {
		panic(err)
	}
	var ms []Match
	for _, p := range pairs {
		m := Match{A: p.A, B: p.B}
		switch u := r.Float64(); {
		case u < tie:
			m.Winner = Tie
		case r.Float64() < 1/(1+math.Exp(q[p.B]-q[p.A])):
			m.Winner = AWins
		default:
			m.Winner = BWins
		}
		ms = append(ms, m)
	}
	return ids, ms
}

func TestFitMatchesSlowReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for trial := 0; trial < 30; trial++ {
		n := 2 + r.IntN(20)
		ids, ms := randomTournament(r, n, 2*(1+r.IntN(3)), []float64{0, 0.2, 0.6}[trial%3])
		prior := []float64{0.5, 0.5, 1, 0.1}[trial%4]
		iters := []int{500, 500, 37}[trial%3]
		got, err := Fit(ids, ms, Options{Iterations: iters, Prior: prior})
		if err != nil {
			t.Fatal(err)
		}
		want := slowFit(ids, ms, iters, prior)
		for _, s := range got {
			d := math.Abs(s.Strength-want[s.ID]) / want[s.ID]
			worst = math.Max(worst, d)
			if d > 1e-12 {
				t.Errorf("trial %d %s: strength %.17g, slow reference %.17g", trial, s.ID, s.Strength, want[s.ID])
			}
			if s.Score != math.Log(s.Strength) {
				t.Errorf("score %v is not ln strength %v", s.Score, s.Strength)
			}
		}
	}
	t.Logf("max relative deviation from the 256-bit reference: %.3g", worst)
}

// TestFitFixedPoint checks the fit against the equations it solves, not the
// update it runs: at convergence W_i / (p_i·D_i(p)) is one constant for all
// i (the renormalisation absorbs it) and the strengths have mean 1.
func TestFitFixedPoint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		ids, ms := randomTournament(r, 4+r.IntN(16), 6, 0.2)
		got, err := Fit(ids, ms, Options{Iterations: 20000})
		if err != nil {
			t.Fatal(err)
		}
		p := make(map[string]float64)
		sum := 0.0
		for _, s := range got {
			p[s.ID] = s.Strength
			sum += s.Strength
		}
		if mean := sum / float64(len(got)); math.Abs(mean-1) > 1e-12 {
			t.Errorf("mean strength %v, want 1", mean)
		}
		var ratios []float64
		for _, id := range ids {
			w, d := 0.5, 0.5/(p[id]+1)
			for _, m := range ms {
				if m.A != id && m.B != id {
					continue
				}
				d += 1 / (p[m.A] + p[m.B])
				switch {
				case m.Winner == Tie:
					w += 0.5
				case (m.Winner == AWins) == (m.A == id):
					w++
				}
			}
			ratios = append(ratios, w/(p[id]*d))
		}
		sort.Float64s(ratios)
		if spread := ratios[len(ratios)-1]/ratios[0] - 1; spread > 1e-9 {
			t.Errorf("trial %d: W/(p·D) spreads by %.3g over episodes, want one constant", trial, spread)
		}
	}
}

func TestFitProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ids, ms := randomTournament(r, 18, 6, 0.2)
	base, err := Fit(ids, ms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := func(s []Score) map[string]Score {
		m := make(map[string]Score)
		for _, x := range s {
			m[x.ID] = x
		}
		return m
	}
	b := byID(base)
	for i, s := range base {
		if s.Rank != i+1 || (i > 0 && s.Score > base[i-1].Score) {
			t.Fatalf("not sorted best first: %+v", base)
		}
	}

	// Order of matches and sides of a pair do not matter.
	shuf := append([]Match(nil), ms...)
	r.Shuffle(len(shuf), func(i, j int) { shuf[i], shuf[j] = shuf[j], shuf[i] })
	for i := range shuf {
		if i%2 == 0 {
			m := &shuf[i]
			m.A, m.B = m.B, m.A
			switch m.Winner {
			case AWins:
				m.Winner = BWins
			case BWins:
				m.Winner = AWins
			}
		}
	}
	other, _ := Fit(ids, shuf, Options{})
	for _, s := range other {
		if d := math.Abs(s.Score - b[s.ID].Score); d > 1e-12 {
			t.Errorf("%s: score %v after reordering and side swaps, %v before", s.ID, s.Score, b[s.ID].Score)
		}
		if s.Wins != b[s.ID].Wins || s.Losses != b[s.ID].Losses || s.Ties != b[s.ID].Ties {
			t.Errorf("%s: record changed with side swaps", s.ID)
		}
	}

	// Turning one of an episode's losses into a win raises its score.
	for i, m := range ms {
		if m.Winner != BWins {
			continue
		}
		up := append([]Match(nil), ms...)
		up[i].Winner = AWins
		after, _ := Fit(ids, up, Options{})
		if a := byID(after)[m.A]; a.Score <= b[m.A].Score {
			t.Errorf("%s won match %d instead of losing: score %v, was %v", m.A, i, a.Score, b[m.A].Score)
		}
		break
	}
}

func TestFitTiesAndOrder(t *testing.T) {
	// Everyone ties in a regular ring: equal strengths 1, ordered by id.
	ids := []string{"c", "a", "d", "b"}
	pairs, _ := Ring(ids, 2, 9)
	var ms []Match
	for _, p := range pairs {
		ms = append(ms, Match{A: p.A, B: p.B, Winner: Tie})
	}
	got, err := Fit(ids, ms, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"a", "b", "c", "d"} {
		if got[i].ID != want || got[i].Rank != i+1 || math.Abs(got[i].Strength-1) > 1e-12 || got[i].Ties != 2 {
			t.Errorf("position %d: %+v, want %s with strength 1, rank %d, 2 ties", i, got[i], want, i+1)
		}
	}
	// A tie is half a win: one tie between x and y leaves them equal; a win
	// for x over z and a loss of y to z give x > y.
	got, _ = Fit(nil, []Match{{"x", "y", Tie}, {"x", "z", AWins}, {"z", "y", AWins}}, Options{})
	if got[0].ID != "x" || got[2].ID != "y" {
		t.Errorf("order %v, want x, z, y", got)
	}
	// Undefeated and winless episodes keep finite scores thanks to the prior.
	got, _ = Fit(nil, []Match{{"w", "l", AWins}, {"w", "l", AWins}, {"w", "l", AWins}}, Options{})
	for _, s := range got {
		if math.IsInf(s.Score, 0) || math.IsNaN(s.Score) {
			t.Errorf("%s: score %v, want finite", s.ID, s.Score)
		}
	}
	if got[0].ID != "w" || got[0].Wins != 3 || got[1].Losses != 3 {
		t.Errorf("got %+v", got)
	}
}

func TestFitErrors(t *testing.T) {
	cases := []struct {
		name string
		ids  []string
		ms   []Match
		o    Options
	}{
		{"unknown episode", []string{"a", "b"}, []Match{{"a", "c", AWins}}, Options{}},
		{"self match", []string{"a", "b"}, []Match{{"a", "a", AWins}}, Options{}},
		{"no winner", []string{"a", "b"}, []Match{{"a", "b", 0}}, Options{}},
		{"duplicate id", []string{"a", "a"}, nil, Options{}},
		{"negative prior", nil, nil, Options{Prior: -1}},
		{"negative iterations", nil, nil, Options{Iterations: -3}},
	}
	for _, c := range cases {
		if _, err := Fit(c.ids, c.ms, c.o); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ids, ms := randomTournament(r, 18, 6, 0.1)
	scores, _ := Fit(ids, ms, Options{})
	s, err := Select(scores, DefaultTrain, DefaultVal)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Train) != 15 || len(s.Val) != 1 || s.Train[0] != scores[0].ID || s.Val[0] != scores[15].ID {
		t.Errorf("selection %+v from %+v", s, scores)
	}
	if _, err := Select(scores[:15], DefaultTrain, DefaultVal); err == nil {
		t.Error("15 episodes for 15+1: no error")
	}
	if _, err := Select(scores, 0, 1); err == nil {
		t.Error("zero train: no error")
	}
	s, _ = Select(scores, 3, 0)
	if len(s.Train) != 3 || s.Val == nil || len(s.Val) != 0 {
		t.Errorf("3+0: %+v", s)
	}

	// An episode whose judgments were all invalid is placed by the prior
	// alone (here first) and must not be selected.
	got, err := Fit([]string{"a", "b", "c", "lost"}, []Match{{"a", "b", AWins}, {"b", "c", AWins}, {"a", "c", Tie}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].ID != "lost" {
		t.Fatalf("premise: the unjudged episode ranks first, got %+v", got)
	}
	s, err = Select(got, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Train, ",") != "a,b" || strings.Join(s.Val, ",") != "c" {
		t.Errorf("selection %+v from %+v, want train a,b and val c", s, got)
	}
	if _, err := Select(got, 3, 1); err == nil {
		t.Error("3+1 from 3 judged episodes: no error")
	}
}

// BenchmarkFitPaper fits one task of the paper's shape: 18 episodes, 54 judgments.
func BenchmarkFitPaper(b *testing.B) {
	ids, ms := randomTournament(rand.New(rand.NewPCG(9, 9)), 18, 6, 0.1)
	for b.Loop() {
		if _, err := Fit(ids, ms, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

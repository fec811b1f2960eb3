package rank

import (
	"fmt"
	"math"
	"sort"
)

// The paper's fit: 500 MM rounds, a prior of 0.5.
const (
	DefaultIterations = 500
	DefaultPrior      = 0.5
)

// Outcome is a valid verdict on a pair.
type Outcome int

// Outcomes. A tie gives half a win to each side.
const (
	AWins Outcome = iota + 1
	BWins
	Tie
)

// Match is one valid judgment of episode A against episode B. Invalid
// judgments never become a Match: they are counted apart (see ReadMatches).
type Match struct {
	A, B   string
	Winner Outcome
}

// Options are the fit's settings; zero values mean the defaults.
type Options struct {
	Iterations int     // MM rounds (DefaultIterations)
	Prior      float64 // virtual wins and virtual games against a strength-1 player (DefaultPrior); negative is an error
}

// Score is one episode's place in the fit. Rank 1 is the best.
type Score struct {
	ID       string  `json:"id"`
	Score    float64 `json:"score"` // ln Strength
	Strength float64 `json:"strength"`
	Rank     int     `json:"rank"`
	Wins     int     `json:"wins"`
	Losses   int     `json:"losses"`
	Ties     int     `json:"ties"`
}

// Fit estimates Bradley–Terry strengths by the MM algorithm as the paper's
// ranking step does. With W_i = wins_i + ties_i/2 + prior, n_ij the games
// between i and j, every round computes, from the previous strengths p,
//
//	p_i ← W_i / (prior/(p_i+1) + Σ_j n_ij/(p_i+p_j))
//
// for all i at once (Jacobi), then rescales p to mean 1. Strengths start
// at 1. The prior is prior virtual wins plus prior virtual games against a
// mean player of strength 1, so an episode that won or lost everything
// keeps a finite score. ids lists every episode; nil takes the episodes
// named in matches. An episode without a valid match is placed by the
// prior alone, which can rank it anywhere, even first; Select skips it. A match naming an episode outside ids, or an episode against
// itself, is an error. The result is sorted best first: higher score,
// then (for scores equal to within 1e-12) lower id.
func Fit(ids []string, matches []Match, o Options) ([]Score, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if ids == nil {
		ids = matchIDs(matches)
	}
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, dup := index[id]; dup {
			return nil, fmt.Errorf("episode %q listed twice", id)
		}
		index[id] = i
	}
	n := len(ids)
	scores := make([]Score, n)
	for i, id := range ids {
		scores[i].ID = id
	}
	games := make(map[[2]int]float64)
	wins := make([]float64, n)
	for k, m := range matches {
		a, okA := index[m.A]
		b, okB := index[m.B]
		switch {
		case !okA || !okB:
			return nil, fmt.Errorf("match %d (%q vs %q) names an episode that is not ranked", k+1, m.A, m.B)
		case a == b:
			return nil, fmt.Errorf("match %d compares %q with itself", k+1, m.A)
		}
		games[[2]int{min(a, b), max(a, b)}]++
		switch m.Winner {
		case AWins:
			wins[a]++
			scores[a].Wins++
			scores[b].Losses++
		case BWins:
			wins[b]++
			scores[b].Wins++
			scores[a].Losses++
		case Tie:
			wins[a] += 0.5
			wins[b] += 0.5
			scores[a].Ties++
			scores[b].Ties++
		default:
			return nil, fmt.Errorf("match %d has no valid winner (%d)", k+1, m.Winner)
		}
	}
	p := mm(n, wins, games, o)
	for i := range scores {
		scores[i].Strength = p[i]
		scores[i].Score = math.Log(p[i])
	}
	sortScores(scores)
	return scores, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.Iterations == 0 {
		o.Iterations = DefaultIterations
	}
	if o.Prior == 0 {
		o.Prior = DefaultPrior
	}
	if o.Iterations < 0 {
		return o, fmt.Errorf("iterations %d must be positive", o.Iterations)
	}
	if o.Prior < 0 || math.IsNaN(o.Prior) || math.IsInf(o.Prior, 0) {
		return o, fmt.Errorf("prior %v must be a positive number", o.Prior)
	}
	return o, nil
}

// mm runs the MM rounds over pair counts keyed (low, high) index.
func mm(n int, wins []float64, games map[[2]int]float64, o Options) []float64 {
	type edge struct {
		i, j int
		n    float64
	}
	edges := make([]edge, 0, len(games))
	for k, c := range games {
		edges = append(edges, edge{k[0], k[1], c})
	}
	// A fixed summation order makes the result independent of map order.
	sort.Slice(edges, func(x, y int) bool {
		if edges[x].i != edges[y].i {
			return edges[x].i < edges[y].i
		}
		return edges[x].j < edges[y].j
	})
	p := make([]float64, n)
	for i := range p {
		p[i] = 1
	}
	next, den := make([]float64, n), make([]float64, n)
	for it := 0; it < o.Iterations; it++ {
		for i := range den {
			den[i] = o.Prior / (p[i] + 1)
		}
		for _, e := range edges {
			d := e.n / (p[e.i] + p[e.j])
			den[e.i] += d
			den[e.j] += d
		}
		sum := 0.0
		for i := range next {
			next[i] = (wins[i] + o.Prior) / den[i]
			sum += next[i]
		}
		mean := sum / float64(n)
		for i := range p {
			p[i] = next[i] / mean
		}
	}
	return p
}

// sortScores orders best first and numbers the ranks from 1.
func sortScores(s []Score) {
	key := func(x float64) float64 { return math.Round(x * 1e12) }
	sort.SliceStable(s, func(i, j int) bool {
		if ki, kj := key(s[i].Score), key(s[j].Score); ki != kj {
			return ki > kj
		}
		return s[i].ID < s[j].ID
	})
	for i := range s {
		s[i].Rank = i + 1
	}
}

// matchIDs returns the episodes named in matches, sorted.
func matchIDs(matches []Match) []string {
	seen := make(map[string]bool)
	var ids []string
	for _, m := range matches {
		for _, id := range []string{m.A, m.B} {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids
}

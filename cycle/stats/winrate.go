package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Verdict is one judge's verdict on one pair, from the candidate's side.
type Verdict struct {
	Pair    string // the pair judged (task, episode pair); verdicts on one pair are one sample
	Outcome Outcome
}

// Outcome of a verdict for the candidate.
type Outcome int

// Outcomes.
const (
	Win Outcome = iota + 1
	Loss
	Tie
)

// WinRateOptions set the interval; zero values mean the defaults.
type WinRateOptions struct {
	Level     float64 // confidence level (0.95)
	Resamples int     // bootstrap resamples (10000)
	Seed      uint64  // bootstrap seed (1)
}

// WinRateResult is a win rate with its pair-level interval.
type WinRateResult struct {
	Wins   int     `json:"wins"`
	Losses int     `json:"losses"`
	Ties   int     `json:"ties"`
	Pairs  int     `json:"pairs"`
	Rate   float64 `json:"rate"` // wins / (wins + losses); NaN with no decisive verdict
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Level  float64 `json:"level"`
	Method string  `json:"method"`
}

// The interval methods, named in every result and report.
const (
	// BootstrapMethod: from MinBootstrapPairs decisive pairs on.
	BootstrapMethod = "percentile bootstrap over pairs: every resample draws whole pairs with replacement and " +
		"keeps all their verdicts, so several verdicts on one pair count as one sample, not several"
	// ExactMethod: below MinBootstrapPairs decisive pairs.
	ExactMethod = "Clopper-Pearson exact interval over decisive pairs: a pair counts for the side most of " +
		"its verdicts favour and a pair without a majority is left out, so several verdicts on one pair " +
		"count as one sample, not several"
)

// IntervalMethod says how WinRate chooses its interval, for reports.
const IntervalMethod = "exact Clopper-Pearson interval over decisive pairs below 30 of them, else a " +
	"percentile bootstrap over pairs (whole pairs resampled with all their verdicts)"

// WinRate is wins / (wins + losses) over the verdicts, ties excluded, with
// an interval in which six judges' verdicts on one pair are one sample:
// with fewer than MinBootstrapPairs decisive pairs the exact
// Clopper–Pearson interval over the pairs' majorities (ExactMethod), else
// a percentile bootstrap that resamples pairs with all their verdicts
// (BootstrapMethod; resamples without a decisive verdict are skipped,
// deterministic for a seed). The result names the method.
func WinRate(vs []Verdict, o WinRateOptions) (WinRateResult, error) {
	if o.Level == 0 {
		o.Level = 0.95
	}
	if o.Resamples == 0 {
		o.Resamples = 10000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if !(o.Level > 0 && o.Level < 1) || o.Resamples < 0 {
		return WinRateResult{}, fmt.Errorf("win rate interval: level %v must be in (0, 1) and resamples %d positive", o.Level, o.Resamples)
	}
	type tally struct{ w, l int }
	index := make(map[string]int)
	var pairs []tally
	r := WinRateResult{Level: o.Level, Method: BootstrapMethod}
	for _, v := range vs {
		i, ok := index[v.Pair]
		if !ok {
			i = len(pairs)
			index[v.Pair] = i
			pairs = append(pairs, tally{})
		}
		switch v.Outcome {
		case Win:
			pairs[i].w++
			r.Wins++
		case Loss:
			pairs[i].l++
			r.Losses++
		case Tie:
			r.Ties++
		default:
			return WinRateResult{}, fmt.Errorf("verdict on pair %q has no outcome (%d)", v.Pair, v.Outcome)
		}
	}
	r.Pairs = len(pairs)
	if r.Wins+r.Losses == 0 {
		if len(vs) == 0 {
			return WinRateResult{}, errors.New("win rate of no verdicts")
		}
		r.Rate, r.Low, r.High = math.NaN(), math.NaN(), math.NaN()
		return r, nil
	}
	r.Rate = float64(r.Wins) / float64(r.Wins+r.Losses)
	won, decisive := 0, 0
	for _, p := range pairs {
		if p.w != p.l {
			decisive++
		}
		if p.w > p.l {
			won++
		}
	}
	if decisive < MinBootstrapPairs {
		r.Method = ExactMethod
		r.Low, r.High = ClopperPearson(won, decisive, o.Level)
		if decisive == 0 {
			r.Low, r.High = 0, 1 // every pair split evenly: nothing is known
		}
		return r, nil
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x77696e72)) // "winr"
	rates := make([]float64, 0, o.Resamples)
	for b := 0; b < o.Resamples; b++ {
		w, l := 0, 0
		for range pairs {
			p := pairs[rng.IntN(len(pairs))]
			w, l = w+p.w, l+p.l
		}
		if w+l > 0 {
			rates = append(rates, float64(w)/float64(w+l))
		}
	}
	sort.Float64s(rates)
	alpha := (1 - o.Level) / 2
	r.Low, r.High = quantile(rates, alpha), quantile(rates, 1-alpha)
	return r, nil
}

// quantile is the q-quantile of sorted s, interpolating linearly between
// order statistics (NumPy's default).
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

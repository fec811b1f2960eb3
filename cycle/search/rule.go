package search

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
)

// Judging rules: how the verdicts of a search decide its champion.
const (
	// RuleReference is the released reference code's baseline-anchored
	// rule (SakanaAI/mass _derive_champion_baseline with
	// --judge-vs-baseline): every version is judged against the bare-task
	// baseline; a baseline win takes the crown while no champion holds one,
	// later baseline-winners must beat that champion in an arbitration.
	RuleReference = "reference"
	// RulePaper is Algorithm 2 of the paper as written: every candidate is
	// judged against the champion and replaces it on a win.
	RulePaper = "paper"
	// RuleAdjacent is the reference's adjacent rule (_derive_champion):
	// v(k-1) vs v(k), arbitration when the champion is older.
	RuleAdjacent = "adjacent"
	// DefaultRule is the rule of a search that names none.
	DefaultRule = RuleReference
)

// Verdict winners in the reference's orientation.
const (
	WinA   = "A"
	WinB   = "B"
	WinTie = "tie"
)

// CheckRule reports whether rule is one of the judging rules.
func CheckRule(rule string) error {
	switch rule {
	case RuleReference, RulePaper, RuleAdjacent:
		return nil
	}
	return fmt.Errorf("judging rule %q: want reference, paper or adjacent", rule)
}

// Verdict is what a rule reads of one record row: its key and the
// aggregate winner ("A", "B" or "tie"; anything else counts as no win).
type Verdict struct {
	Key    string `json:"key"`
	Winner string `json:"winner"`
}

// Decision is what a rule makes of the verdicts so far.
type Decision struct {
	Champion int // the version holding the crown (v0 by default)
	// Retained is the champion when it is proven (rule reference: it holds
	// a baseline win); nil otherwise.
	Retained         *int
	BeatsReference   bool
	NeedsArbitration bool // the current version needs champion_v{Champion}_vs_v{Current}
	Current          int  // the highest version judged
}

var (
	baselineKeyRE = regexp.MustCompile(`^v(\d+)_vs_no_harness$`)
	championKeyRE = regexp.MustCompile(`^champion_v(\d+)_vs_v(\d+)$`)
	adjacentKeyRE = regexp.MustCompile(`^v(\d+)_vs_v(\d+)$`)
)

// BaselineKey is the key of v(k) judged against the bare-task baseline.
func BaselineKey(k int) string { return fmt.Sprintf("v%d_vs_no_harness", k) }

// ArbitrationKey is the key of challenger v(k) judged against champion v(c).
func ArbitrationKey(c, k int) string { return fmt.Sprintf("champion_v%d_vs_v%d", c, k) }

// AdjacentKey is the key of v(k) judged against v(k-1).
func AdjacentKey(k int) string { return fmt.Sprintf("v%d_vs_v%d", k-1, k) }

// atoiSmall parses a version number; huge ones are not versions.
func atoiSmall(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n < 1<<30
}

// verdictMaps indexes the rows; a later row of a key replaces an earlier
// one, as the reference's dicts do.
func verdictMaps(history, champions []Verdict) (base, adj map[int]string, arb map[[2]int]string) {
	base, adj, arb = map[int]string{}, map[int]string{}, map[[2]int]string{}
	for _, v := range history {
		if m := baselineKeyRE.FindStringSubmatch(v.Key); m != nil {
			if k, ok := atoiSmall(m[1]); ok {
				base[k] = v.Winner
			}
		} else if m := adjacentKeyRE.FindStringSubmatch(v.Key); m != nil {
			a, okA := atoiSmall(m[1])
			b, okB := atoiSmall(m[2])
			if okA && okB && b == a+1 {
				adj[b] = v.Winner
			}
		}
	}
	for _, v := range champions {
		if m := championKeyRE.FindStringSubmatch(v.Key); m != nil {
			c, okC := atoiSmall(m[1])
			k, okK := atoiSmall(m[2])
			if okC && okK {
				arb[[2]int{c, k}] = v.Winner
			}
		}
	}
	return base, adj, arb
}

func highest(m map[int]string) int {
	cur := 0
	for k := range m {
		cur = max(cur, k)
	}
	return cur
}

func ascending(m map[int]string) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

// Decide applies rule to the comparison history (baseline or adjacent
// rows) and the champion history (arbitration rows). The current version
// is the highest one judged (baseline keys; adjacent keys under
// RuleAdjacent). It is the one decision function of both the live search
// and `massctl search replay`.
func Decide(rule string, history, champions []Verdict) Decision {
	base, adj, arb := verdictMaps(history, champions)
	switch rule {
	case RulePaper:
		return decidePaper(base, arb)
	case RuleAdjacent:
		return decideAdjacent(adj, arb)
	}
	return decideReference(base, arb)
}

func decideReference(base map[int]string, arb map[[2]int]string) Decision {
	d := Decision{Current: highest(base)}
	champWin := base[0] == WinB
	for _, k := range ascending(base) {
		if k < 1 || base[k] != WinB {
			continue
		}
		w, asked := arb[[2]int{d.Champion, k}]
		switch {
		case !champWin:
			d.Champion, champWin = k, true
		case asked:
			if w == WinB {
				d.Champion = k
			}
		case k == d.Current:
			d.NeedsArbitration = true
		}
	}
	if champWin {
		v := d.Champion
		d.Retained, d.BeatsReference = &v, true
	}
	return d
}

func decideAdjacent(adj map[int]string, arb map[[2]int]string) Decision {
	d := Decision{Current: highest(adj)}
	for _, k := range ascending(adj) {
		if k < 1 || adj[k] != WinB {
			continue
		}
		w, asked := arb[[2]int{d.Champion, k}]
		switch {
		case d.Champion == k-1:
			d.Champion = k
		case asked:
			if w == WinB {
				d.Champion = k
			}
		case k == d.Current:
			d.NeedsArbitration = true
		}
	}
	// The reference's evaluate-only step retains the adjacent champion and
	// writes beats_reference = (a champion exists): always true here.
	v := d.Champion
	d.Retained, d.BeatsReference = &v, true
	return d
}

// decidePaper is Algorithm 2 as written: each candidate is judged against
// the champion of its time and replaces it on a win; beats_reference is
// the champion's own baseline verdict.
func decidePaper(base map[int]string, arb map[[2]int]string) Decision {
	d := Decision{Current: highest(base)}
	for _, k := range ascending(base) {
		if k < 1 {
			continue
		}
		w, asked := arb[[2]int{d.Champion, k}]
		switch {
		case asked && w == WinB:
			d.Champion = k
		case !asked && k == d.Current:
			d.NeedsArbitration = true
		}
	}
	v := d.Champion
	d.Retained, d.BeatsReference = &v, base[d.Champion] == WinB
	return d
}

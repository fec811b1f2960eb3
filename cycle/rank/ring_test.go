package rank

import (
	"fmt"
	"testing"
)

// slowRing is the schedule's pair set by brute force over all position
// pairs: i and j meet when their circular distance is at most opponents/2.
func slowRing(order []string, opponents int) map[[2]string]bool {
	n := len(order)
	set := make(map[[2]string]bool)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := j - i
			if n-d < d {
				d = n - d
			}
			if d <= opponents/2 {
				set[unordered(order[i], order[j])] = true
			}
		}
	}
	return set
}

func unordered(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func TestRingMatchesSlowReference(t *testing.T) {
	for n := 0; n <= 30; n++ {
		for _, k := range []int{2, 4, 6, 8} {
			for seed := uint64(0); seed < 4; seed++ {
				names := Names(n)
				pairs, err := Ring(names, k, seed)
				if err != nil {
					t.Fatal(err)
				}
				order, _ := ringOrder(names, seed)
				want := slowRing(order, k)
				got := make(map[[2]string]bool)
				meets := make(map[string]int)
				for _, p := range pairs {
					key := unordered(p.A, p.B)
					if p.A == p.B || got[key] {
						t.Fatalf("n=%d k=%d seed=%d: pair %v repeated or self", n, k, seed, p)
					}
					got[key] = true
					meets[p.A]++
					meets[p.B]++
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("n=%d k=%d seed=%d: pairs %v, slow reference %v", n, k, seed, got, want)
				}
				wantMeets := min(k, n-1)
				for _, name := range names {
					if n > 1 && meets[name] != wantMeets {
						t.Errorf("n=%d k=%d: %s meets %d others, want %d", n, k, name, meets[name], wantMeets)
					}
				}
				if n > k && len(pairs) != n*k/2 {
					t.Errorf("n=%d k=%d: %d pairs, want %d", n, k, len(pairs), n*k/2)
				}
			}
		}
	}
}

// TestRingPaperShape: 18 episodes, 6 opponents = 54 judgments.
func TestRingPaperShape(t *testing.T) {
	pairs, err := Ring(Names(18), DefaultOpponents, 42)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(pairs), 54; got != want {
		t.Errorf("%d pairs, want %d", got, want)
	}
}

func TestRingSeeds(t *testing.T) {
	a, _ := Ring(Names(18), 6, 1)
	b, _ := Ring(Names(18), 6, 1)
	c, _ := Ring(Names(18), 6, 2)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("same seed gave different schedules")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Error("seeds 1 and 2 gave the same schedule")
	}
	// Input order does not matter: the names are sorted first.
	rev := Names(18)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	d, _ := Ring(rev, 6, 1)
	if fmt.Sprint(a) != fmt.Sprint(d) {
		t.Error("reordered names gave a different schedule")
	}
}

// TestRingSidesRandomised: about half the pairs are shown with the later
// ring position first.
func TestRingSidesRandomised(t *testing.T) {
	flipped, total := 0, 0
	for seed := uint64(0); seed < 200; seed++ {
		order, _ := ringOrder(Names(18), seed)
		pos := make(map[string]int)
		for i, s := range order {
			pos[s] = i
		}
		pairs, _ := Ring(Names(18), 6, seed)
		for _, p := range pairs {
			d := (pos[p.B] - pos[p.A] + 18) % 18
			if d > 3 { // B comes before A on the ring
				flipped++
			}
			total++
		}
	}
	if frac := float64(flipped) / float64(total); frac < 0.45 || frac > 0.55 {
		t.Errorf("%d of %d pairs flipped (%.3f), want about half", flipped, total, frac)
	}
}

func TestRingErrors(t *testing.T) {
	for _, k := range []int{0, -2, 3, 5} {
		if _, err := Ring(Names(5), k, 1); err == nil {
			t.Errorf("opponents %d: no error", k)
		}
	}
	if _, err := Ring([]string{"x", "y", "x"}, 2, 1); err == nil {
		t.Error("duplicate names: no error")
	}
}

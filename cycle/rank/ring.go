package rank

import (
	"fmt"
	"math/rand/v2"
	"sort"
)

// DefaultOpponents is how many neighbours each episode meets in the ring.
const DefaultOpponents = 6

// Pair is one scheduled comparison: A is shown first, B second.
type Pair struct {
	A string `json:"a"`
	B string `json:"b"`
}

// Ring schedules the comparisons of a tournament over names: the names
// sorted, shuffled by seed, then every position i paired with i+d (mod n)
// for d = 1..opponents/2, each unordered pair once, and the sides of each
// pair flipped by a second generator drawn from the same seed. With more
// than opponents names each name meets exactly opponents others once
// (n·opponents/2 pairs); with fewer, every two names meet once.
// opponents must be even and positive and names distinct.
func Ring(names []string, opponents int, seed uint64) ([]Pair, error) {
	if opponents <= 0 || opponents%2 != 0 {
		return nil, fmt.Errorf("opponents %d must be even and positive (each episode meets opponents/2 neighbours on either side)", opponents)
	}
	order, err := ringOrder(names, seed)
	if err != nil {
		return nil, err
	}
	sides := rand.New(rand.NewPCG(seed, 0x73696465)) // "side"

	n := len(order)
	seen := make(map[[2]int]bool)
	var pairs []Pair
	for d := 1; d <= opponents/2; d++ {
		for i := 0; i < n; i++ {
			j := (i + d) % n
			if i == j {
				continue
			}
			key := [2]int{min(i, j), max(i, j)}
			if seen[key] {
				continue
			}
			seen[key] = true
			p := Pair{A: order[i], B: order[j]}
			if sides.IntN(2) == 1 {
				p.A, p.B = p.B, p.A
			}
			pairs = append(pairs, p)
		}
	}
	return pairs, nil
}

// ringOrder is the names sorted, then shuffled by seed: ring positions.
func ringOrder(names []string, seed uint64) ([]string, error) {
	order := append([]string(nil), names...)
	sort.Strings(order)
	for i := 1; i < len(order); i++ {
		if order[i] == order[i-1] {
			return nil, fmt.Errorf("episode %q appears twice", order[i])
		}
	}
	shuffle := rand.New(rand.NewPCG(seed, 0x72696e67)) // "ring"
	shuffle.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order, nil
}

// Names returns "0".."n-1", the episode names of a synthetic schedule.
func Names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprint(i)
	}
	return out
}

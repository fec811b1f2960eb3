package rank

import "fmt"

// The paper's selection: ranks 1–15 train, rank 16 validates.
const (
	DefaultTrain = 15
	DefaultVal   = 1
)

// Selection is the episodes chosen from a ranking, best first.
type Selection struct {
	Train []string `json:"train"`
	Val   []string `json:"val"`
}

// Select takes ranks 1..train for training and the next val ranks for
// validation from scores sorted best first (as Fit returns them). Fewer
// than train+val scores is an error: the task cannot be used.
func Select(scores []Score, train, val int) (Selection, error) {
	if train <= 0 || val < 0 {
		return Selection{}, fmt.Errorf("select %d train and %d validation episodes: train must be positive and validation not negative", train, val)
	}
	if len(scores) < train+val {
		return Selection{}, fmt.Errorf("%d ranked episodes, need at least %d (%d train + %d validation)", len(scores), train+val, train, val)
	}
	var s Selection
	for i, sc := range scores[:train+val] {
		if sc.Rank != i+1 {
			return Selection{}, fmt.Errorf("scores are not sorted by rank: position %d holds rank %d", i+1, sc.Rank)
		}
		if i < train {
			s.Train = append(s.Train, sc.ID)
		} else {
			s.Val = append(s.Val, sc.ID)
		}
	}
	if s.Val == nil {
		s.Val = []string{}
	}
	return s, nil
}

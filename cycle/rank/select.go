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

// Select takes the best train episodes for training and the next val for
// validation from scores sorted best first (as Fit returns them). An
// episode without a single valid judgment is skipped: the fit places it by
// the prior alone, which can put it anywhere, even first. Fewer than
// train+val judged episodes is an error: the task cannot be used.
func Select(scores []Score, train, val int) (Selection, error) {
	if train <= 0 || val < 0 {
		return Selection{}, fmt.Errorf("select %d train and %d validation episodes: train must be positive and validation not negative", train, val)
	}
	s := Selection{Val: []string{}}
	judged := 0
	for i, sc := range scores {
		if sc.Rank != i+1 {
			return Selection{}, fmt.Errorf("scores are not sorted by rank: position %d holds rank %d", i+1, sc.Rank)
		}
		if sc.Wins+sc.Losses+sc.Ties == 0 {
			continue
		}
		switch judged++; {
		case judged <= train:
			s.Train = append(s.Train, sc.ID)
		case judged <= train+val:
			s.Val = append(s.Val, sc.ID)
		}
	}
	if judged < train+val {
		return Selection{}, fmt.Errorf("%d episodes with a valid judgment, need at least %d (%d train + %d validation)", judged, train+val, train, val)
	}
	return s, nil
}

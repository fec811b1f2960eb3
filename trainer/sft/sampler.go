package sft

import (
	"math/rand/v2"
	"sort"
)

// OrchestratorProb is the probability of drawing the orchestrator group once a task is chosen.
const OrchestratorProb = 1.0 / 3.0

// Sampler draws windows as the method prescribes: a task uniformly, then the orchestrator
// group with probability 1/3 (else the worker/auxiliary group), then a window of that group
// uniformly, with replacement. When a task lacks one group the other is used.
// A Sampler is not safe for concurrent use.
type Sampler struct {
	rows   []Row
	tasks  []string
	groups map[string]*taskGroups
	rng    *rand.Rand

	drawn     int64
	processed int64
}

type taskGroups struct {
	orch   []int // indexes into rows
	others []int
}

// NewSampler indexes rows by task and role group. rows must not be empty.
func NewSampler(rows []Row, seed int64) *Sampler {
	s := &Sampler{
		rows:   rows,
		groups: make(map[string]*taskGroups),
		rng:    rand.New(rand.NewPCG(uint64(seed), 0x6d617373)),
	}
	for i := range rows {
		g := s.groups[rows[i].Task]
		if g == nil {
			g = &taskGroups{}
			s.groups[rows[i].Task] = g
			s.tasks = append(s.tasks, rows[i].Task)
		}
		if rows[i].Role == RoleOrchestrator {
			g.orch = append(g.orch, i)
		} else {
			g.others = append(g.others, i)
		}
	}
	sort.Strings(s.tasks)
	return s
}

// Tasks returns the tasks the sampler draws from, sorted.
func (s *Sampler) Tasks() []string { return s.tasks }

// Next draws one window. It panics when the sampler holds no rows.
func (s *Sampler) Next() Row {
	_, r := s.NextIndexed()
	return r
}

// NextIndexed draws one window as Next does and also returns its index in
// the rows the sampler was built on (for the exposure record).
func (s *Sampler) NextIndexed() (int, Row) {
	if len(s.tasks) == 0 {
		panic("sft: Next on an empty sampler")
	}
	g := s.groups[s.tasks[s.rng.IntN(len(s.tasks))]]
	pool := g.others
	if s.rng.Float64() < OrchestratorProb {
		pool = g.orch
	}
	if len(pool) == 0 {
		pool = g.orch
		if len(pool) == 0 {
			pool = g.others
		}
	}
	i := pool[s.rng.IntN(len(pool))]
	r := s.rows[i]
	s.drawn++
	s.processed += int64(r.NLossTokens)
	return i, r
}

// Drawn returns how many windows Next has returned.
func (s *Sampler) Drawn() int64 { return s.drawn }

// ProcessedTokens returns the supervised tokens of all windows drawn so far
// ("processed supervised tokens" in the method's token accounting).
func (s *Sampler) ProcessedTokens() int64 { return s.processed }

// Advance draws and discards n windows, so that a sampler rebuilt with the same rows and
// seed continues where a run that had drawn n windows stopped (checkpoint resume). The
// processed-token count includes the discarded draws.
func (s *Sampler) Advance(n int64) {
	for i := int64(0); i < n; i++ {
		s.Next()
	}
}

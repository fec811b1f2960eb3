package jobkind

import "context"

// EpisodeCloser ends the store row of an episode a crash cut off: the row
// takes e's status and summary and, when ev has a type, ev is appended to
// the episode's job, in one transaction, unless the row already ended
// (closing twice changes nothing). It reports whether it changed the row.
// The manager and the reporters it hands to Run implement it.
type EpisodeCloser interface {
	CloseEpisode(ctx context.Context, e EpisodeRecord, ev Event) (bool, error)
}

// Event is an event written together with an episode's row.
type Event struct {
	Type    string
	Message string
	Fields  map[string]any
}

// Recovery is what start-up recovery needs from the manager: the episode
// rows a crash left "running" and the close path for their rows.
type Recovery interface {
	EpisodeCloser
	RunningEpisodes(ctx context.Context) ([]EpisodeRecord, error)
}

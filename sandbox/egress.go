package sandbox

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/sandbox/egress"
)

// Egress opts an agent box into the episode's egress proxy: HTTP(S) to the
// listed domains only, DNS answered by the proxy, bytes capped per
// episode, every request recorded (see sandbox/egress). Without it a box
// has no network at all.
type Egress struct {
	Allow    []string `json:"allow" yaml:"allow"`         // boxspec.CheckDomain entries
	MaxBytes int64    `json:"max_bytes" yaml:"max_bytes"` // per episode, both directions; 0: egress.DefaultMaxBytes
}

// Validate checks the allowlist and the cap.
func (e *Egress) Validate() error {
	if len(e.Allow) == 0 {
		return fmt.Errorf("policy: egress.allow is empty; leave egress out for no network: %w", ErrInvalid)
	}
	if _, err := egress.NewAllowlist(e.Allow); err != nil {
		return fmt.Errorf("policy: egress.%v: %w", err, ErrInvalid)
	}
	if e.MaxBytes < 0 {
		return fmt.Errorf("policy: egress.max_bytes must not be negative: %w", ErrInvalid)
	}
	return nil
}

// EgressLogger is implemented by runtimes that run egress proxies. EgressLog
// returns every request the episode's agents made through its proxy, in
// order, with Agent filled; none for an episode without egress. It works
// after KillEpisode (which stops the proxy) until RemoveWorkspace.
type EgressLogger interface {
	EgressLog(ctx context.Context, episode string) ([]egress.Record, error)
}

package probe

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/sandbox/usable"
)

// usability runs the everyday commands (package usable) as the agent user
// in agent B: a box that isolates but breaks `ls` or python3 fails here.
func (r *run) usability(ctx context.Context) error {
	rs, err := usable.Run(ctx, r.b)
	r.report.add(rs...)
	if err != nil {
		return fmt.Errorf("verify: usability group: %w", err)
	}
	return nil
}

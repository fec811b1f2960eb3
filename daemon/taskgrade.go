package daemon

import (
	"context"
	"fmt"
	"io"

	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/taskspec"
)

// GradeTask runs spec's grader on export in the builtins' sandbox, in the
// box an episode's grade gets (massctl task grade).
func (b *Builtins) GradeTask(ctx context.Context, spec *taskspec.Spec, export io.Reader) (grade.Grade, error) {
	if _, err := b.Runtime.Get(ctx); err != nil {
		return grade.Grade{}, fmt.Errorf("sandbox runtime: %v: %w", err, api.ErrUnavailable)
	}
	return episode.GradeExport(ctx, b.Env.Deps(), spec, export), nil
}

package audit

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
)

// GuardsFile is the guard record the episode writes (docs/formats.md).
const GuardsFile = guard.FileName

// loadGuards reads guards.json and run_status.json's grade; either may be
// absent (an episode recorded before graders, or one cut off).
func loadGuards(ctx context.Context, src Source, in *Inputs) error {
	if b, err := src.ReadFile(ctx, GuardsFile, MaxManifestBytes); err == nil {
		var g guard.Report
		if err := json.Unmarshal(b, &g); err != nil {
			return err
		}
		in.Guards = &g
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	b, err := src.ReadFile(ctx, StatusFile, MaxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var st struct {
		Grade *grade.Grade `json:"grade"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	in.Grade = st.Grade
	return nil
}

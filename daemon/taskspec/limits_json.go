package taskspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// limitsJSON is Limits without its methods, so the codecs below can embed it.
type limitsJSON Limits

// MarshalJSON writes episode_wall_time as a Go duration string ("30m0s"), the
// way a spec file writes it, rather than as nanoseconds.
func (l Limits) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		limitsJSON
		EpisodeWallTime string `json:"episode_wall_time"`
	}{limitsJSON(l), l.EpisodeWallTime.String()})
}

// UnmarshalJSON reads episode_wall_time as a duration string, or as a number
// of nanoseconds (what databases written before the string form hold).
func (l *Limits) UnmarshalJSON(b []byte) error {
	var v struct {
		limitsJSON
		EpisodeWallTime json.RawMessage `json:"episode_wall_time"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*l = Limits(v.limitsJSON)
	raw := bytes.TrimSpace(v.EpisodeWallTime)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		l.EpisodeWallTime = 0
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("episode_wall_time: %w", err)
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("episode_wall_time: %w", err)
		}
		l.EpisodeWallTime = d
	default:
		var ns int64
		if err := json.Unmarshal(raw, &ns); err != nil {
			return fmt.Errorf("episode_wall_time: want a duration like \"30m\": %w", err)
		}
		l.EpisodeWallTime = time.Duration(ns)
	}
	return nil
}

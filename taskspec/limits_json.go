package taskspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// limitsJSON is Limits without its methods, so the codecs below can embed it.
type limitsJSON Limits

// MarshalJSON writes episode_wall_time and agent_wall_time as Go duration
// strings ("30m0s"), the way a spec file writes them, rather than as
// nanoseconds. agent_wall_time is left out when unset.
func (l Limits) MarshalJSON() ([]byte, error) {
	v := struct {
		limitsJSON
		EpisodeWallTime string `json:"episode_wall_time"`
		AgentWallTime   string `json:"agent_wall_time,omitempty"`
	}{limitsJSON: limitsJSON(l), EpisodeWallTime: l.EpisodeWallTime.String()}
	if l.AgentWallTime != 0 {
		v.AgentWallTime = l.AgentWallTime.String()
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads episode_wall_time as a duration string, or as a number
// of nanoseconds (what databases written before the string form hold), and
// agent_wall_time as a duration string; a missing field is zero.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var v struct {
		limitsJSON
		EpisodeWallTime json.RawMessage `json:"episode_wall_time"`
		AgentWallTime   json.RawMessage `json:"agent_wall_time"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*l = Limits(v.limitsJSON)
	var err error
	if l.EpisodeWallTime, err = durationJSON(v.EpisodeWallTime, true); err != nil {
		return fmt.Errorf("episode_wall_time: %w", err)
	}
	if l.AgentWallTime, err = durationJSON(v.AgentWallTime, false); err != nil {
		return fmt.Errorf("agent_wall_time: %w", err)
	}
	return nil
}

// durationJSON decodes a duration string; legacyNanos also accepts a number
// of nanoseconds. Absent and null are zero.
func durationJSON(raw json.RawMessage, legacyNanos bool) (time.Duration, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return 0, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, err
		}
		return time.ParseDuration(s)
	case legacyNanos:
		var ns int64
		if err := json.Unmarshal(raw, &ns); err != nil {
			return 0, fmt.Errorf("want a duration like \"30m\": %w", err)
		}
		return time.Duration(ns), nil
	}
	return 0, fmt.Errorf("want a duration string like \"10m\", got %.40s", raw)
}

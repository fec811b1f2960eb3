package taskspec

import (
	"encoding/json"
	"fmt"
)

// graderJSON is Grader without its methods, for the codecs below.
type graderJSON Grader

// MarshalJSON writes timeout as a Go duration string ("2m0s"), as the spec
// file and the limits write durations, and leaves it out when unset.
func (g Grader) MarshalJSON() ([]byte, error) {
	v := struct {
		graderJSON
		Timeout string `json:"timeout,omitempty"`
	}{graderJSON: graderJSON(g)}
	if g.Timeout != 0 {
		v.Timeout = g.Timeout.String()
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads timeout as a duration string or, as rows stored
// before the string form hold it, a number of nanoseconds.
func (g *Grader) UnmarshalJSON(b []byte) error {
	var v struct {
		graderJSON
		Timeout json.RawMessage `json:"timeout"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*g = Grader(v.graderJSON)
	var err error
	if g.Timeout, err = durationJSON(v.Timeout, true); err != nil {
		return fmt.Errorf("grader.timeout: %w", err)
	}
	return nil
}

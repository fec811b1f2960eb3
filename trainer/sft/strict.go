package sft

import (
	"fmt"
	"sort"
	"strings"
)

// supervised reports whether the episode yielded a window that trains.
func (r *episodeResult) supervised() bool {
	for i := range r.rows {
		if r.rows[i].NLossTokens > 0 {
			return true
		}
	}
	return false
}

// why says why an episode yielded no window with supervised tokens: its
// segments and what dropped them.
func (r *episodeResult) why() string {
	if r.segments == 0 {
		return "yielded no segment (no recorded model call reconstructs into a conversation)"
	}
	var ds []string
	for k, v := range r.dropped {
		ds = append(ds, fmt.Sprintf("%s %d", k, v))
	}
	sort.Strings(ds)
	if len(ds) == 0 {
		ds = []string{"none"}
	}
	return fmt.Sprintf("yielded no window with supervised tokens: %d segments in %d threads, dropped: %s",
		r.segments, r.threads, strings.Join(ds, ", "))
}

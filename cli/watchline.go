package cli

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/daemon/api"
)

// humanField renames the key of a "key value" field of a structured
// progress message the way counters are named.
func humanField(f string) string {
	k, v, ok := strings.Cut(f, " ")
	if !ok || !strings.Contains(k, "_") {
		return f
	}
	if k == "sup_tok" {
		k = "processed_supervised_tokens"
	}
	return console.CounterLabel(k) + " " + v
}

// keyFields begin the fields of a structured message that stay on a
// narrow screen: a training's step, loss, val loss and ETA, a collection's
// eligible count, a ranking's judgments.
var keyFields = []string{"step ", "loss ", "val loss ", "ETA ", "eligible ", "judgments "}

func keyField(f string) bool {
	for _, k := range keyFields {
		if strings.HasPrefix(f, k) {
			return true
		}
	}
	return false
}

// segment is one piece of the status line; lower rank is dropped last.
type segment struct {
	text string
	rank int
}

// statusSegments are the pieces of a job's status line in display order.
// The state, the stage and a structured message's key fields (keyFields)
// rank highest, then the elapsed time, the other fields, a bare task name
// and the counters; the job id and the last event type go first when
// space is short.
func statusSegments(j api.Job, last string) []segment {
	state := j.State
	if j.Attempt > 1 {
		state += fmt.Sprintf(" (attempt %d)", j.Attempt)
	}
	segs := []segment{{j.ID, 6}, {state, 0}, {fmtDuration(elapsed(j)), 2}}
	p := j.Progress
	if p == nil {
		p = &api.Progress{}
	}
	if p.Stage != "" {
		segs = append(segs, segment{p.Stage, 1})
	}
	// A structured message ("step 3/10  loss 1.23  ...  ETA 4s", two spaces
	// apart) is split so that its key fields survive truncation; counters it
	// repeats rank below it.
	fields := strings.Split(p.Message, "  ")
	structured := len(fields) > 2
	seen := map[string]bool{}
	var msg []segment
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		rank := 3
		if structured {
			f = humanField(f)
			switch {
			case keyField(f):
				rank = 1
			case !strings.Contains(f, " "):
				rank = 4 // a bare name (the task): its numbers matter more
			}
		}
		seen[f] = true
		msg = append(msg, segment{f, rank})
	}
	segs = append(segs, msg...)
	counters := p.Counters
	if structured {
		// The message carries the stage's numbers; of the counters only the
		// stage's place (stage 2/8) adds to it.
		counters = map[string]int64{}
		for _, k := range []string{"stage", "stages"} {
			if v, ok := p.Counters[k]; ok {
				counters[k] = v
			}
		}
	}
	for _, c := range console.Counters(counters) {
		if seen[c] {
			continue
		}
		rank := 3
		if structured {
			rank = 5
		}
		segs = append(segs, segment{c, rank})
	}
	if last != "" {
		segs = append(segs, segment{"last: " + last, 7})
	}
	return segs
}

// fitLine joins segments with " · ", dropping the lowest-ranked ones until
// the line is at most width runes, and cuts what is left with "…".
func fitLine(segs []segment, width int) string {
	const sep = " · "
	join := func(keep int) string {
		var parts []string
		for _, s := range segs {
			if s.rank <= keep {
				parts = append(parts, plainText(s.text))
			}
		}
		return strings.Join(parts, sep)
	}
	maxRank := 0
	for _, s := range segs {
		maxRank = max(maxRank, s.rank)
	}
	line := join(maxRank)
	for keep := maxRank - 1; keep >= 0 && utf8.RuneCountInString(line) > width; keep-- {
		line = join(keep)
	}
	return truncate(line, width)
}

// plainText replaces control characters (newlines, escapes) with spaces so a
// segment can never move the cursor.
func plainText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

func truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// termWidth is the column count of the terminal w writes to, or 80 when it
// cannot be measured.
func termWidth(w any) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	return 80
}

// jobOutcome is the last line `job watch` prints for a finished job.
func jobOutcome(j api.Job) string {
	s := fmt.Sprintf("job %s %s after %s", j.ID, j.State, fmtDuration(elapsed(j)))
	if j.Error != "" {
		s += ": " + plainText(j.Error)
	}
	return s
}

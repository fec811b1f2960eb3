package loop

import (
	"fmt"
	"regexp"
	"strings"
)

// contentState is the chanting guard's window of recent content. A tool
// call resets it: chanting is judged within one stream.
type contentState struct {
	history string
	next    int
	at      map[string][]int
	inCode  bool
}

func newContentState() contentState { return contentState{at: map[string][]int{}} }

var (
	reTable   = regexp.MustCompile(`(^|\n)\s*(\|.*\||[|+-]{3,})`)
	reList    = regexp.MustCompile(`(^|\n)\s*([-*+]|\d+\.)\s`)
	reHeading = regexp.MustCompile(`(^|\n)#+\s`)
	reQuote   = regexp.MustCompile(`(^|\n)>\s`)
	reDivider = regexp.MustCompile(`^[-+_=*\x{2500}-\x{257F}]+$`)
)

// chant feeds content line by line, as a stream delivers it, and reports
// a ChunkSize passage seen ChantThreshold times with mean gap at most 1.5
// chunk sizes. Code blocks, tables, lists, headings, quotes and dividers
// reset the window, as in qwen-code.
func (d *Detector) chant(content string) *Halt {
	for _, line := range strings.SplitAfter(content, "\n") {
		if h := d.chantPiece(line); h != nil {
			return h
		}
	}
	return nil
}

func (d *Detector) chantPiece(p string) *Halt {
	c, cfg := &d.content, d.cfg
	fences := strings.Count(p, "```")
	divider := reDivider.MatchString(strings.TrimSpace(p)) && strings.TrimSpace(p) != ""
	if fences > 0 || divider || reTable.MatchString(p) || reList.MatchString(p) || reHeading.MatchString(p) || reQuote.MatchString(p) {
		inCode := c.inCode
		*c = newContentState()
		c.inCode = inCode
	}
	was := c.inCode
	if fences%2 == 1 {
		c.inCode = !c.inCode
	}
	if was || c.inCode || divider {
		return nil
	}
	c.history += p
	if cut := len(c.history) - cfg.ContentHistory; cut > 0 {
		c.history = c.history[cut:]
		c.next = max(0, c.next-cut)
		for k, ps := range c.at {
			kept := ps[:0]
			for _, x := range ps {
				if x-cut >= 0 {
					kept = append(kept, x-cut)
				}
			}
			if len(kept) == 0 {
				delete(c.at, k)
			} else {
				c.at[k] = kept
			}
		}
	}
	for ; c.next+cfg.ChunkSize <= len(c.history); c.next++ {
		chunk := c.history[c.next : c.next+cfg.ChunkSize]
		ps := append(c.at[chunk], c.next)
		c.at[chunk] = ps
		if n := cfg.ChantThreshold; len(ps) >= n {
			recent := ps[len(ps)-n:]
			if float64(recent[n-1]-recent[0])/float64(n-1) <= float64(cfg.ChunkSize)*1.5 {
				return &Halt{Rule: RuleChanting, Detail: fmt.Sprintf("the same %d-byte passage repeated %d times: %q", cfg.ChunkSize, len(ps), chunk)}
			}
		}
	}
	return nil
}

var reSubject = regexp.MustCompile(`^\*\*(.+?)\*\*`)

// thoughts splits reasoning into thoughts (paragraphs; a leading **bold**
// line is the subject) and reports the last ThoughtRepeat being the same
// subject and first 200 bytes of description. A tool call clears them.
func (d *Detector) thoughts(reasoning string) *Halt {
	for _, para := range strings.Split(reasoning, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		subject, desc := "", para
		if m := reSubject.FindStringSubmatch(para); m != nil {
			subject, desc = m[1], strings.TrimSpace(para[len(m[0]):])
		}
		desc = strings.ToLower(desc)
		if len(desc) > 200 {
			desc = desc[:200]
		}
		d.thought = push(d.thought, strings.ToLower(strings.TrimSpace(subject))+"|"+desc, 50)
		n := d.cfg.ThoughtRepeat
		if len(d.thought) < n {
			continue
		}
		last := d.thought[len(d.thought)-n:]
		same := true
		for _, t := range last {
			same = same && t == last[0]
		}
		if same {
			return &Halt{Rule: RuleThoughts, Detail: fmt.Sprintf("the same thought %d times in a row: %q", n, Cut(para, 120))}
		}
	}
	return nil
}

// Cut shortens s to at most n bytes for a message.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// gitOverview matches one segment that is git status, diff or ls-files.
var gitOverview = regexp.MustCompile(`(?i)^git(?:\s+(?:-C\s+\S+|--no-pager))*\s+(status|diff|ls-files)\b`)

var (
	reSegSep   = regexp.MustCompile(`&&|\|\||[;&|\n]`)
	reRevision = regexp.MustCompile(`^(HEAD|@)$|^(?:HEAD|@)(?:[~^]\d*)+$|^[0-9a-fA-F]{7,40}$|^\S+\.{2,3}\S+$`)
)

// gitInspection reports a run_shell_command whose every segment is a git
// status / ls-files / whole-tree diff (qwen-code's shell stagnation guard).
func gitInspection(name, args string) bool {
	if name != "run_shell_command" {
		return false
	}
	var a struct {
		Command *string `json:"command"`
	}
	if jsonUnmarshal(args, &a) != nil || a.Command == nil {
		return false
	}
	n := 0
	for _, seg := range reSegSep.Split(*a.Command, -1) {
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		n++
		m := gitOverview.FindStringSubmatch(seg)
		if m == nil || (strings.EqualFold(m[1], "diff") && !overviewDiff(seg[len(m[0]):])) {
			return false
		}
	}
	return n > 0
}

func overviewDiff(rest string) bool {
	toks := strings.Fields(rest)
	for i, t := range toks {
		if t == "--" && i < len(toks)-1 {
			return false
		}
		if !strings.HasPrefix(t, "-") && !reRevision.MatchString(t) {
			return false
		}
	}
	return true
}

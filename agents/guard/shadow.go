package guard

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mass-dev/mass/agents/ledger"
)

// NearCopy is the share of a protected file's non-blank lines that a
// workspace file must contain to count as a near copy.
const NearCopy = 0.5

// minNearLines keeps tiny files from matching everything.
const minNearLines = 4

// Shadow is a workspace file that began as a copy of a protected code file
// and was then changed.
type Shadow struct {
	Path       string    `json:"path"`
	Origin     string    `json:"origin"`     // the protected file it copies
	Evidence   []string  `json:"evidence"`   // how the copy was seen
	Similarity float64   `json:"similarity"` // share of the origin's lines it still holds
	RanBy      []Command `json:"ran_by"`     // shell commands after the copy that name it
}

// ShadowCopies finds, among the final workspace code files (outside
// protected and hidden paths), those that differ from a shipped protected
// code file yet began as a copy of it: a shell command copied the original
// there (cp, install, rsync, cat >), an agent's manifest once showed the
// original's exact hash there, or the final content still holds at least
// NearCopy of the original's lines. Identical copies are not shadows.
func ShadowCopies(shipped, final []File, manifests map[string]map[string]string, recs []ledger.Record) []Shadow {
	copies := copyCommands(recs)
	origLines := make([]map[string]int, len(shipped))
	for i, o := range shipped {
		origLines[i] = lineSet(o.Data)
	}
	out := []Shadow{}
	for _, f := range final {
		var best *Shadow
		fLines := lineSet(f.Data)
		for i, o := range shipped {
			if !o.Code || o.SHA256 == f.SHA256 {
				continue
			}
			s := Shadow{Path: f.Path, Origin: o.Path, Similarity: similarity(origLines[i], fLines)}
			if seq, ok := copiedBy(copies, o.Path, f.Path); ok {
				s.Evidence = append(s.Evidence, fmt.Sprintf("copied by the shell command at seq %d", seq))
			}
			for _, agent := range sortedKeys(manifests) {
				if manifests[agent][f.Path] == o.SHA256 {
					s.Evidence = append(s.Evidence, "a byte copy in "+agent+"'s manifest")
					break
				}
			}
			if s.Similarity >= NearCopy && total(origLines[i]) >= minNearLines {
				s.Evidence = append(s.Evidence, fmt.Sprintf("a near copy: holds %.0f%% of the original's lines", 100*s.Similarity))
			}
			if len(s.Evidence) > 0 && (best == nil || s.Similarity > best.Similarity) {
				best = &s
			}
		}
		if best != nil {
			best.RanBy = ranBy(recs, best.Path)
			out = append(out, *best)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

type copyCmd struct {
	seq      int64
	src, dst string
}

// copyCommands indexes the shell copies by source path.
func copyCommands(recs []ledger.Record) map[string][]copyCmd {
	out := map[string][]copyCmd{}
	for _, r := range recs {
		if !isShell(r) {
			continue
		}
		var d shellDetail
		_ = json.Unmarshal(r.Detail, &d)
		for _, c := range Analyze(d.Command, shellDir(r)).Copies {
			out[c[0]] = append(out[c[0]], copyCmd{seq: r.Seq, src: c[0], dst: c[1]})
		}
	}
	return out
}

// copiedBy finds a copy of origin (or a directory holding it) to dst (or a
// directory dst lies in, under the origin's relative name).
func copiedBy(copies map[string][]copyCmd, origin, dst string) (int64, bool) {
	for src := origin; src != "/" && src != "."; src = path.Dir(src) {
		for _, c := range copies[src] {
			if c.dst == dst || (strings.HasPrefix(dst, c.dst+"/") && copiedInto(c, origin, dst)) {
				return c.seq, true
			}
		}
	}
	return 0, false
}

// copiedInto reports whether copying c.src into the directory c.dst puts
// origin at dst (under its base name, or its path below c.src).
func copiedInto(c copyCmd, origin, dst string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(origin, c.src), "/")
	return path.Join(c.dst, path.Base(origin)) == dst || (rel != "" && path.Join(c.dst, rel) == dst)
}

// ranBy lists the shell commands that name p (its path or, for a command
// run elsewhere, its base name).
func ranBy(recs []ledger.Record, p string) []Command {
	out := []Command{}
	for _, r := range recs {
		if !isShell(r) {
			continue
		}
		var d shellDetail
		_ = json.Unmarshal(r.Detail, &d)
		hit := false
		for _, m := range Analyze(d.Command, shellDir(r)).Mentions {
			if m == p {
				hit = true
			}
		}
		if hit {
			out = append(out, Command{Seq: r.Seq, Agent: r.Agent, Command: d.Command, ExitCode: r.ExitCode, OK: r.OK, Denied: d.Denied})
		}
	}
	return out
}

// lineSet counts the non-blank lines of b.
func lineSet(b []byte) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l]++
		}
	}
	return m
}

func total(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// similarity is the share of the original's lines (a multiset) that the
// candidate holds.
func similarity(orig, cand map[string]int) float64 {
	n := total(orig)
	if n == 0 {
		return 0
	}
	have := 0
	for l, c := range orig {
		have += min(c, cand[l])
	}
	return float64(have) / float64(n)
}

func sortedKeys(m map[string]map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

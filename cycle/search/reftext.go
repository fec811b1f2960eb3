package search

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// The optimizer prompt's history sections as the reference writes them
// (iterate_multi_agent_prompt.py: _history_summary_text,
// _history_action_items, _history_delta_checklist_text,
// _design_diffs_for_history, _shorten).

// shorten collapses white space to single spaces and cuts to max
// characters with "..." (Python's " ".join(s.split()) and slicing).
func shorten(s string, max int) string {
	t := strings.Join(strings.FieldsFunc(s, pySpace), " ")
	if utf8.RuneCountInString(t) <= max {
		return t
	}
	return strings.TrimRightFunc(firstChars(t, max-3), pySpace) + "..."
}

// takeawayCues mark a rationale sentence as an actionable defect.
var takeawayCues = []string{"fail", "fails", "failed", "missing", "inconsistent", "mismatch", "not ", "lack",
	"weak", "nan", "null", "error", "defect", "reproducibility"}

// sentences splits white-space-collapsed text after '.', '!' or '?'
// followed by a space (the reference's (?<=[.!?])\s+).
func sentences(t string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(t); i++ {
		if (t[i] == '.' || t[i] == '!' || t[i] == '?') && t[i+1] == ' ' {
			out = append(out, t[start:i+1])
			start = i + 2
		}
	}
	return append(out, t[start:])
}

// actionItems picks up to max distinct rationale sentences naming a defect.
func actionItems(rationale string, max int) []string {
	var picks []string
	seen := map[string]bool{}
	for _, s := range sentences(strings.Join(strings.FieldsFunc(rationale, pySpace), " ")) {
		s = strings.TrimFunc(s, pySpace)
		if s == "" || seen[s] {
			continue
		}
		low := strings.ToLower(s)
		hit := false
		for _, c := range takeawayCues {
			if strings.Contains(low, c) {
				hit = true
				break
			}
		}
		if !hit {
			continue
		}
		seen[s] = true
		if picks = append(picks, s); len(picks) >= max {
			break
		}
	}
	return picks
}

// historySummary is the pairwise history as the optimizer reads it. Repo
// paths are left out: they are host paths, which no agent sees.
func historySummary(rows []Comparison, diffs map[string]string) string {
	if len(rows) == 0 {
		return "- No prior pairwise history yet."
	}
	var lines []string
	for _, c := range rows {
		rationale := strings.TrimFunc(c.Rationale, pySpace)
		winner := c.Winner
		if winner == "" {
			winner = "unknown"
		}
		lines = append(lines, "- Comparison: "+c.Comparison)
		if c.Key != "" {
			lines = append(lines, "  - Key: "+c.Key)
		}
		lines = append(lines, "  - Winner: "+winner)
		if c.Model != "" {
			lines = append(lines, "  - Judge model: "+c.Model)
		}
		if c.JudgedAt != "" {
			lines = append(lines, "  - Judged at (UTC): "+c.JudgedAt)
		}
		if rationale != "" {
			lines = append(lines, "  - Rationale (verbatim excerpt): "+shorten(rationale, 2400))
		}
		if items := actionItems(rationale, 6); len(items) > 0 {
			lines = append(lines, "  - Actionable takeaways for next version:")
			for _, it := range items {
				lines = append(lines, "    - "+it)
			}
		}
		if d, ok := diffs[c.Key]; ok && diffs != nil {
			lines = append(lines, "  - Design change behind this verdict (unified diff of the design block; '-' lines were removed, '+' lines added):")
			for _, l := range pySplitLines(d) {
				lines = append(lines, "    "+l)
			}
		}
		lines = append(lines, "  - Use this history as constraints: preserve winning traits, fix listed defects.")
	}
	return strings.Join(lines, "\n")
}

// issueBuckets are the reference's recurring-issue patterns.
var issueBuckets = []struct {
	name string
	re   *regexp.Regexp
}{
	{"report-metrics inconsistency", regexp.MustCompile(`(inconsistent|mismatch|contradict|does not match|conflict)`)},
	{"missing deliverables or sections", regexp.MustCompile(`(missing|absent|not found|not present)`)},
	{"stability/robustness gap", regexp.MustCompile(`(stability|robustness|subperiod|pre_2020|post_2020)`)},
	{"null/nan quality defect", regexp.MustCompile(`(nan|null|none|non-standard json)`)},
	{"reproducibility gap", regexp.MustCompile(`(reproducibility|not reproducible|cannot reproduce|requirements|pin)`)},
	{"validation/test weakness", regexp.MustCompile(`(validation|test|insufficient evidence|not proven|unclear)`)},
}

// deltaChecklist counts the recurring issues in the history's rationales.
func deltaChecklist(rows []Comparison) string {
	if len(rows) == 0 {
		return "- No recurring issues yet."
	}
	counts := make([]int, len(issueBuckets))
	examples := make([]string, len(issueBuckets))
	for _, c := range rows {
		rationale := strings.TrimFunc(c.Rationale, pySpace)
		if rationale == "" {
			continue
		}
		low := strings.ToLower(rationale)
		for i, b := range issueBuckets {
			if b.re.MatchString(low) {
				counts[i]++
				if examples[i] == "" {
					if items := actionItems(rationale, 1); len(items) > 0 {
						examples[i] = items[0]
					}
				}
			}
		}
	}
	var ranked []int
	for i, n := range counts {
		if n > 0 {
			ranked = append(ranked, i)
		}
	}
	if len(ranked) == 0 {
		return "- No repeated issue patterns detected yet."
	}
	sort.SliceStable(ranked, func(x, y int) bool { return counts[ranked[x]] > counts[ranked[y]] })
	lines := []string{"- Prioritize fixes for recurring issues below (higher count = more repeated in history):"}
	for _, i := range ranked {
		if examples[i] != "" {
			lines = append(lines, fmt.Sprintf("- [%dx] %s: e.g., %s", counts[i], issueBuckets[i].name, examples[i]))
		} else {
			lines = append(lines, fmt.Sprintf("- [%dx] %s", counts[i], issueBuckets[i].name))
		}
	}
	return strings.Join(lines, "\n")
}

// historyDiffs is the diff v(k-1) -> v(k) behind each history row (its
// key → the diff, white space collapsed): the 3 most recent get 1500
// characters, older ones 400. In baseline mode the rows are
// v{k}_vs_no_harness (k >= 1), else adjacent v{k-1}_vs_v{k}. path gives a
// version's file.
func historyDiffs(rows []Comparison, baseline bool, path func(int) string) map[string]string {
	type entry struct {
		newer int
		key   string
	}
	seen := map[entry]bool{}
	var adj []entry
	for _, c := range rows {
		var e entry
		if m := baselineKeyRE.FindStringSubmatch(c.Key); baseline && m != nil {
			k, ok := atoiSmall(m[1])
			if !ok || k < 1 {
				continue
			}
			e = entry{k, c.Key}
		} else if m := adjacentKeyRE.FindStringSubmatch(c.Key); !baseline && m != nil {
			a, okA := atoiSmall(m[1])
			b, okB := atoiSmall(m[2])
			if !okA || !okB || b != a+1 {
				continue
			}
			e = entry{b, c.Key}
		} else {
			continue
		}
		if !seen[e] {
			seen[e] = true
			adj = append(adj, e)
		}
	}
	sort.Slice(adj, func(i, j int) bool {
		if adj[i].newer != adj[j].newer {
			return adj[i].newer < adj[j].newer
		}
		return adj[i].key < adj[j].key
	})
	diffs := map[string]string{}
	for rank := 0; rank < len(adj); rank++ {
		e := adj[len(adj)-1-rank]
		a, errA := os.ReadFile(path(e.newer - 1))
		b, errB := os.ReadFile(path(e.newer))
		if errA != nil || errB != nil {
			continue
		}
		text := strings.TrimFunc(UnifiedLines(pySplitLines(string(a)), pySplitLines(string(b)),
			fmt.Sprintf("multi_agent_design_v%d", e.newer-1), fmt.Sprintf("multi_agent_design_v%d", e.newer), 1), pySpace)
		if text == "" {
			text = "(designs are identical)"
		}
		limit := 400
		if rank < 3 {
			limit = 1500
		}
		diffs[e.key] = shorten(text, limit)
	}
	return diffs
}

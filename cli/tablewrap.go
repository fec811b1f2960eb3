package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/sandbox/probe"
)

// tableWidth is the width a wide table is wrapped to: the terminal's, or
// 0 (no wrapping) with --wide or when w is not a terminal (a pipe keeps
// whole lines for grep).
func tableWidth(w io.Writer, wide bool) int {
	if wide || !isTerminal(w) {
		return 0
	}
	return termWidth(w)
}

// writeWrapped writes a table of head and rows that fits width columns:
// narrow columns keep their width, the wide ones share what is left and
// wrap their cells at spaces onto continuation lines. width 0 writes each
// row on one line.
func writeWrapped(w io.Writer, width int, head []string, rows [][]string) error {
	const gap = 2
	all := append([][]string{head}, rows...)
	widths := make([]int, len(head))
	for _, r := range all {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := gap * (len(head) - 1)
	for _, n := range widths {
		total += n
	}
	if width <= 0 || total <= width {
		tw := tabwriter.NewWriter(w, 0, 4, gap, ' ', 0)
		for _, r := range all {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		return tw.Flush()
	}
	fitWidths(widths, width-gap*(len(head)-1))
	for _, r := range all {
		cells := make([][]string, len(r))
		lines := 1
		for i, c := range r {
			cells[i] = wrapText(c, widths[i])
			lines = max(lines, len(cells[i]))
		}
		for l := 0; l < lines; l++ {
			var b strings.Builder
			for i := range r {
				part := ""
				if l < len(cells[i]) {
					part = cells[i][l]
				}
				if i == len(r)-1 {
					b.WriteString(part)
					break
				}
				b.WriteString(part + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(part)+gap))
			}
			if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
				return err
			}
		}
	}
	return nil
}

// fitWidths caps every column at the largest width C for which the capped
// widths sum to at most room (narrow columns keep theirs, the wide ones
// share the rest evenly), never capping below 10 columns.
func fitWidths(widths []int, room int) {
	const floor = 10
	capped := func(c int) int {
		sum := 0
		for _, n := range widths {
			sum += min(n, c)
		}
		return sum
	}
	c := 0
	for _, n := range widths {
		c = max(c, n)
	}
	for c > floor && capped(c) > room {
		c--
	}
	for i := range widths {
		widths[i] = min(widths[i], c)
	}
}

// wrapText cuts s into lines of at most width runes, at spaces where it
// can, mid-word where a word is longer than a line.
func wrapText(s string, width int) []string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		for utf8.RuneCountInString(word) > width {
			if line != "" {
				out, line = append(out, line), ""
			}
			r := []rune(word)
			out, word = append(out, string(r[:width])), string(r[width:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			out, line = append(out, line), word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

func wideFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wide", Usage: "one line per row however wide (a terminal otherwise wraps to its width)"}
}

// writeVerify prints a probe report: probe.WriteTable's text with the
// probe table wrapped to width (0: probe.WriteTable as is).
func writeVerify(w io.Writer, rep probe.Report, width int) error {
	if width <= 0 {
		return probe.WriteTable(w, rep)
	}
	fmt.Fprintf(w, "runtime: %s (%s)\n", rep.Runtime, rep.RuntimeVersion)
	if rep.RuntimeChoice != "" {
		fmt.Fprintf(w, "chosen:  %s\n", rep.RuntimeChoice)
	}
	fmt.Fprintf(w, "image:   %s (%s)\nengine:  %s\ngroups:  %s\n\n", rep.Image, rep.ImageID, rep.Engine, strings.Join(rep.Groups, ","))
	rows := make([][]string, 0, len(rep.Probes))
	for _, p := range rep.Probes {
		ok := "ok"
		if !p.OK {
			ok = "FAIL"
		}
		rows = append(rows, []string{p.Name, ok, strings.Join(strings.Fields(p.Expected), " "), strings.Join(strings.Fields(p.Observed), " ")})
	}
	if err := writeWrapped(w, width, []string{"PROBE", "OK", "EXPECTED", "OBSERVED"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	if len(rep.NotProven) > 0 {
		fmt.Fprintln(w, "\nnot proven by this run:")
	}
	for _, n := range rep.NotProven {
		if _, err := fmt.Fprintf(w, "  - %s\n", n); err != nil {
			return err
		}
	}
	return nil
}

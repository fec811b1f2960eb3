package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
)

// svg writes one inline SVG plot; every text is escaped.
type svg struct {
	b strings.Builder
}

func newSVG(w, h float64, plot, label string) *svg {
	s := &svg{}
	fmt.Fprintf(&s.b, `<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="%s" role="img" aria-label="%s" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f">`,
		html.EscapeString(plot), html.EscapeString(label), w, h, w, h)
	return s
}

func (s *svg) rect(x, y, w, h float64, class, title string) {
	fmt.Fprintf(&s.b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
		class, x, y, math.Max(w, 0), math.Max(h, 0), html.EscapeString(title))
}

func (s *svg) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(&s.b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, class, x1, y1, x2, y2)
}

func (s *svg) circle(x, y, r float64, class, title string) {
	fmt.Fprintf(&s.b, `<circle class="%s" cx="%.1f" cy="%.1f" r="%.1f"><title>%s</title></circle>`, class, x, y, r, html.EscapeString(title))
}

func (s *svg) text(x, y float64, anchor, class, t string) {
	fmt.Fprintf(&s.b, `<text class="%s" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, class, x, y, anchor, html.EscapeString(t))
}

func (s *svg) polyline(pts [][2]float64, class string) {
	if len(pts) == 0 {
		return
	}
	var p []string
	for _, q := range pts {
		p = append(p, fmt.Sprintf("%.1f,%.1f", q[0], q[1]))
	}
	fmt.Fprintf(&s.b, `<polyline class="%s" points="%s"/>`, class, strings.Join(p, " "))
}

// html closes the plot. The markup is built from numbers and escaped
// text only, so it is safe to inline.
func (s *svg) html() template.HTML {
	s.b.WriteString(`</svg>`)
	return template.HTML(s.b.String()) //nolint:gosec // every text above is escaped
}

// scale maps [lo, hi] onto [a, b].
func scale(lo, hi, a, b float64) func(float64) float64 {
	if hi <= lo {
		hi = lo + 1
	}
	return func(v float64) float64 { return a + (v-lo)/(hi-lo)*(b-a) }
}

func pct(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**p)
}

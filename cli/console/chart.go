package console

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH = 640.0, 260.0
	padL, padR     = 56.0, 16.0
	padT, padB     = 16.0, 36.0
)

// Point is one (x, y) sample of a series.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Color  string
	Points []Point
}

// Chart is a line chart laid out for an inline SVG: polylines in user
// units, axis ticks with their labels. Only numbers and escaped names reach
// the page.
type Chart struct {
	W, H   float64
	Lines  []ChartLine
	XTicks []Tick
	YTicks []Tick
	XLabel string
	Empty  bool
}

// ChartLine is a laid-out series.
type ChartLine struct {
	Name, Color string
	Points      string // "x,y x,y …"
	Dots        []Point
	LegendY     float64
}

// Tick is an axis mark at Pos with its label.
type Tick struct {
	Pos   float64
	Label string
}

// NewChart lays out series on shared axes. A series with one point is
// drawn as a dot; no finite points at all gives an Empty chart.
func NewChart(xlabel string, series ...Series) Chart {
	c := Chart{W: chartW, H: chartH, XLabel: xlabel}
	x0, x1, y0, y1 := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	whole := true // every x is an integer (steps): x ticks are too
	for _, s := range series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			x0, x1, y0, y1 = math.Min(x0, p.X), math.Max(x1, p.X), math.Min(y0, p.Y), math.Max(y1, p.Y)
			whole = whole && p.X == math.Trunc(p.X)
		}
	}
	if x0 > x1 {
		c.Empty = true
		return c
	}
	if x1 == x0 { // one step: centre it
		x0, x1 = x0-0.5, x1+0.5
	}
	if y1 == y0 {
		y0, y1 = y0-0.5, y1+0.5
	}
	sx := func(x float64) float64 { return padL + (x-x0)/(x1-x0)*(chartW-padL-padR) }
	sy := func(y float64) float64 { return chartH - padB - (y-y0)/(y1-y0)*(chartH-padT-padB) }
	for i, s := range series {
		l := ChartLine{Name: s.Name, Color: s.Color, LegendY: padT + 14*float64(i+1)}
		var b strings.Builder
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			fmt.Fprintf(&b, "%.1f,%.1f ", sx(p.X), sy(p.Y))
			l.Dots = append(l.Dots, Point{sx(p.X), sy(p.Y)})
		}
		l.Points = strings.TrimSpace(b.String())
		c.Lines = append(c.Lines, l)
	}
	for i := 0; i <= 4; i++ {
		x := x0 + (x1-x0)*float64(i)/4
		y := y0 + (y1-y0)*float64(i)/4
		c.YTicks = append(c.YTicks, Tick{Pos: sy(y), Label: short(y)})
		if whole {
			x = math.Round(x)
			if n := len(c.XTicks); x < x0 || x > x1 || (n > 0 && c.XTicks[n-1].Pos == sx(x)) {
				continue // a centred single step, or two ticks on one step
			}
		}
		c.XTicks = append(c.XTicks, Tick{Pos: sx(x), Label: short(x)})
	}
	return c
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// short formats an axis value in at most 4 significant digits.
func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// Bars is a horizontal bar chart of named values (a ranking's scores).
type Bars struct {
	W, H float64
	Rows []Bar
	Zero float64 // x of value 0
}

// Bar is one row of Bars.
type Bar struct {
	Label, Value string
	Y, X, Width  float64
	Negative     bool
}

// maxBarLabel is the most characters of a bar's label shown (the table
// beside the chart has the whole id).
const maxBarLabel = 26

func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// NewBars lays out one bar per value, on an axis that holds 0.
func NewBars(labels []string, values []float64) Bars {
	const rowH, left, width = 22.0, 200.0, 380.0
	lo, hi := 0.0, 0.0
	for _, v := range values {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	scale := width / (hi - lo)
	b := Bars{W: left + width + 80, H: rowH*float64(len(values)) + 8, Zero: left + (0-lo)*scale}
	for i, v := range values {
		if !finite(v) {
			v = 0
		}
		x, w := b.Zero, v*scale
		if w < 0 {
			x, w = b.Zero+w, -w
		}
		b.Rows = append(b.Rows, Bar{Label: cutRunes(labels[i], maxBarLabel), Value: strconv.FormatFloat(v, 'f', 3, 64), Y: 4 + rowH*float64(i),
			X: x, Width: math.Max(w, 1), Negative: v < 0})
	}
	return b
}

package console

import (
	"math"
	"strings"
	"testing"
)

func TestNewChart(t *testing.T) {
	c := NewChart("step", Series{Name: "train", Points: []Point{{1, 2.5}, {2, math.NaN()}, {3, 1.5}}}, Series{Name: "val", Points: []Point{{2, 2}}})
	if c.Empty || len(c.Lines) != 2 || len(c.Lines[0].Dots) != 2 || len(c.Lines[1].Dots) != 1 {
		t.Fatalf("chart %+v", c)
	}
	// The first train point is the top-left corner of the plot, the last the bottom-right.
	if got, want := c.Lines[0].Points, "56.0,16.0 624.0,224.0"; got != want {
		t.Errorf("points %q, want %q", got, want)
	}
	if c.XTicks[0].Label != "1" || c.XTicks[len(c.XTicks)-1].Label != "3" || len(c.XTicks) != 3 || c.YTicks[4].Label != "2.5" {
		t.Errorf("ticks %+v %+v", c.XTicks, c.YTicks)
	}
	if e := NewChart("step", Series{Points: []Point{{math.Inf(1), 1}}}); !e.Empty {
		t.Errorf("no finite point: %+v, want Empty", e)
	}
	if one := NewChart("step", Series{Points: []Point{{5, 5}}}); one.Empty || len(one.Lines[0].Dots) != 1 {
		t.Errorf("one point: %+v", one)
	}
}

func TestNewBars(t *testing.T) {
	b := NewBars([]string{"a", strings.Repeat("x", 40)}, []float64{1, -1})
	if b.Rows[0].Negative || !b.Rows[1].Negative || b.Rows[0].X != b.Zero || b.Rows[1].X+b.Rows[1].Width != b.Zero {
		t.Errorf("bars %+v", b)
	}
	if got := []rune(b.Rows[1].Label); len(got) != maxBarLabel || got[len(got)-1] != '…' {
		t.Errorf("long label %q not cut to %d", b.Rows[1].Label, maxBarLabel)
	}
}

func FuzzDiffLines(f *testing.F) {
	f.Add("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n")
	f.Add("\x1b[31m\n\xff")
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range diffLines(s) {
			if strings.ContainsAny(l.Text, "\x1b\r") {
				t.Fatalf("control character kept: %q", l.Text)
			}
		}
	})
}

// Loss-curve ticks were fractional steps (2.5, 3.75) on a 10-step run.
func TestChartStepTicksAreIntegers(t *testing.T) {
	for _, steps := range [][]float64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 2, 3}, {5}, {0, 150, 300, 450, 600, 750, 900, 1050, 1200, 1350, 1500, 1624}} {
		var pts []Point
		for i, s := range steps {
			pts = append(pts, Point{X: s, Y: 2.5 - 0.1*float64(i)})
		}
		c := NewChart("step", Series{Name: "loss", Points: pts})
		if len(c.XTicks) == 0 {
			t.Fatalf("%v: no x ticks", steps)
		}
		for _, tk := range c.XTicks {
			if strings.ContainsAny(tk.Label, ".e") {
				t.Errorf("%v: tick %q is not a whole step", steps, tk.Label)
			}
		}
	}
	c := NewChart("x", Series{Name: "f", Points: []Point{{X: 0.1, Y: 1}, {X: 0.7, Y: 2}}})
	if len(c.XTicks) != 5 {
		t.Errorf("fractional x: %d ticks, want 5", len(c.XTicks))
	}
}

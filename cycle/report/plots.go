package report

import (
	"fmt"
	"html/template"
	"math"

	"github.com/mass-dev/mass/cycle/eval/judgepairs"
)

const labelW, plotW = 230.0, 420.0

// winRatePlot draws each candidate's overall and per-task win rate as a
// bar with its pair-level interval as a whisker, and the 50% line.
func winRatePlot(r *Report) template.HTML {
	type row struct {
		label string
		w     judgepairs.WinRate
	}
	var rows []row
	for _, m := range r.WinRates {
		rows = append(rows, row{m.Model + " · overall", m.Overall})
		for _, t := range m.Tasks {
			rows = append(rows, row{m.Model + " · " + t.Task, t.WinRate})
		}
	}
	h := 30 + 24*float64(len(rows))
	s := newSVG(labelW+plotW+220, h, "win-rates", "win rate against "+r.Baseline+" per task with pair-level intervals")
	x := scale(0, 1, labelW, labelW+plotW)
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		s.line(x(v), 14, x(v), h-6, map[bool]string{true: "mid", false: "grid"}[v == 0.5])
		s.text(x(v), 11, "middle", "axis", fmt.Sprintf("%.0f%%", 100*v))
	}
	for i, rw := range rows {
		y := 20 + 24*float64(i)
		s.text(labelW-8, y+13, "end", "label", rw.label)
		if rw.w.Rate == nil {
			s.text(x(0)+4, y+13, "start", "note", fmt.Sprintf("no decisive verdict (%d ties)", rw.w.Ties))
			continue
		}
		title := fmt.Sprintf("%s: %s, %d wins, %d losses, %d ties over %d pairs", rw.label, pct(rw.w.Rate), rw.w.Wins, rw.w.Losses, rw.w.Ties, rw.w.Pairs)
		s.rect(x(0), y+3, x(*rw.w.Rate)-x(0), 14, "bar", title)
		if rw.w.Low != nil && rw.w.High != nil {
			s.line(x(*rw.w.Low), y+10, x(*rw.w.High), y+10, "whisker")
			s.line(x(*rw.w.Low), y+5, x(*rw.w.Low), y+15, "whisker")
			s.line(x(*rw.w.High), y+5, x(*rw.w.High), y+15, "whisker")
		}
		s.text(labelW+plotW+8, y+13, "start", "value", fmt.Sprintf("%s [%s, %s]", pct(rw.w.Rate), pct(rw.w.Low), pct(rw.w.High)))
	}
	return s.html()
}

// btPlot draws a generation's Bradley–Terry scores per task as a strip:
// one dot per ranked episode, the training and validation ones marked.
func btPlot(g Gen) template.HTML {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, t := range g.Ranking {
		for _, v := range t.Scores {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = -1, 1
	}
	h := 40 + 28*float64(len(g.Ranking))
	s := newSVG(labelW+plotW+40, h, "bt-scores", fmt.Sprintf("Bradley–Terry scores of generation %d per task", g.G))
	x := scale(lo, hi, labelW, labelW+plotW)
	s.text(x(lo), 12, "middle", "axis", fmt.Sprintf("%.2f", lo))
	s.text(x(hi), 12, "middle", "axis", fmt.Sprintf("%.2f", hi))
	s.text(labelW+plotW/2, 12, "middle", "axis", "score = ln strength")
	for i, t := range g.Ranking {
		y := 30 + 28*float64(i)
		s.text(labelW-8, y+4, "end", "label", t.Task)
		s.line(labelW, y, labelW+plotW, y, "grid")
		for k, v := range t.Scores {
			class := "dot"
			switch {
			case k < t.Train:
				class = "dot train"
			case k < t.Train+t.Val:
				class = "dot val"
			}
			s.circle(x(v), y, 5, class, fmt.Sprintf("%s rank %d: %.3f", t.Task, k+1, v))
		}
	}
	return s.html()
}

// lossPlot draws a generation's training loss (line) and validation loss
// (dots on a line) against the step.
func lossPlot(g Gen) template.HTML {
	lo, hi, last := math.Inf(1), math.Inf(-1), 1
	for _, p := range g.Loss {
		for _, v := range []*float64{p.Loss, p.ValLoss} {
			if v != nil {
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
		last = max(last, p.Step)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	const w, h = 560.0, 220.0
	s := newSVG(w, h, "loss", fmt.Sprintf("training and validation loss of generation %d", g.G))
	x, y := scale(0, float64(last), 50, w-20), scale(lo, hi, h-30, 15)
	s.line(50, h-30, w-20, h-30, "grid")
	s.line(50, 15, 50, h-30, "grid")
	s.text(46, y(hi)+4, "end", "axis", fmt.Sprintf("%.3f", hi))
	s.text(46, y(lo)+4, "end", "axis", fmt.Sprintf("%.3f", lo))
	s.text(x(float64(last)), h-12, "end", "axis", fmt.Sprintf("step %d", last))
	var tr, va [][2]float64
	for _, p := range g.Loss {
		if p.Loss != nil {
			tr = append(tr, [2]float64{x(float64(p.Step)), y(*p.Loss)})
		}
		if p.ValLoss != nil {
			va = append(va, [2]float64{x(float64(p.Step)), y(*p.ValLoss)})
			s.circle(x(float64(p.Step)), y(*p.ValLoss), 3.5, "dot val", fmt.Sprintf("step %d validation loss %.4f", p.Step, *p.ValLoss))
		}
	}
	s.polyline(tr, "train-line")
	s.polyline(va, "val-line")
	if len(tr) == 1 {
		s.circle(tr[0][0], tr[0][1], 3.5, "dot train", "training loss")
	}
	s.text(w-20, 14, "end", "legend", "— training   ● validation")
	return s.html()
}

// tokenPlot draws the output tokens per rollout episode of each model.
func tokenPlot(r *Report) template.HTML {
	hi := 1.0
	for _, t := range r.Tokens {
		hi = math.Max(hi, t.OutputPerEpisode)
	}
	h := 30 + 24*float64(len(r.Tokens))
	s := newSVG(labelW+plotW+120, h, "tokens", "output tokens per rollout episode")
	x := scale(0, hi, labelW, labelW+plotW)
	for i, t := range r.Tokens {
		y := 20 + 24*float64(i)
		s.text(labelW-8, y+13, "end", "label", t.Model)
		s.rect(x(0), y+3, x(t.OutputPerEpisode)-x(0), 14, "bar tok", fmt.Sprintf("%s: %.0f output tokens per episode", t.Model, t.OutputPerEpisode))
		s.text(x(t.OutputPerEpisode)+6, y+13, "start", "value", fmt.Sprintf("%.0f", t.OutputPerEpisode))
	}
	return s.html()
}

// supervisedPlot draws each generation's stored and processed supervised
// tokens (generation.json) as a pair of bars.
func supervisedPlot(r *Report) template.HTML {
	hi := 1.0
	for _, g := range r.Generations {
		hi = math.Max(hi, math.Max(float64(g.Tokens.StoredSupervised), float64(g.Tokens.ProcessedSupervised)))
	}
	h := 30 + 40*float64(len(r.Generations))
	s := newSVG(labelW+plotW+120, h, "supervised", "stored and processed supervised tokens per generation")
	x := scale(0, hi, labelW, labelW+plotW)
	for i, g := range r.Generations {
		y := 16 + 40*float64(i)
		for k, v := range []struct {
			what  string
			n     int64
			class string
		}{{"stored", g.Tokens.StoredSupervised, "bar tok"}, {"processed", g.Tokens.ProcessedSupervised, "bar"}} {
			yy := y + 17*float64(k)
			s.text(labelW-8, yy+12, "end", "label", fmt.Sprintf("gen %d %s", g.G, v.what))
			s.rect(x(0), yy+2, x(float64(v.n))-x(0), 13, v.class, fmt.Sprintf("generation %d: %d %s supervised tokens", g.G, v.n, v.what))
			s.text(x(float64(v.n))+6, yy+12, "start", "value", fmt.Sprint(v.n))
		}
	}
	return s.html()
}

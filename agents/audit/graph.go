package audit

import (
	"fmt"
	"path"
)

// Graph geometry, in SVG user units.
const (
	nodeW, nodeH = 132.0, 44.0
	colW, rowH   = 190.0, 170.0
	marginX      = 40.0
	marginY      = 40.0
)

// graph is the handoff graph laid out for SVG: agents as nodes in rows by
// delegation depth, delegations as dashed lines, code handoffs as labelled
// curves from writer to reader.
type graph struct {
	W, H  float64
	Nodes []gNode
	Edges []gEdge
}

type gNode struct {
	X, Y        float64 // top-left corner
	CX, CY      float64 // centre
	Label, Role string
}

type gEdge struct {
	D          string // SVG path data
	LX, LY     float64
	Label      string
	Title      string
	Delegation bool
}

// layout places executor agents (orchestrator, workers, unknown) and their
// edges. It is deterministic: rows by depth, columns by table order.
func layout(r *Report) graph {
	var ids []string
	parent := map[string]string{}
	for _, a := range r.Agents {
		if a.Role == "auxiliary" {
			continue
		}
		ids = append(ids, a.Agent)
		parent[a.Agent] = a.Parent
	}
	depth := map[string]int{}
	var depthOf func(id string, hops int) int
	depthOf = func(id string, hops int) int {
		if d, ok := depth[id]; ok {
			return d
		}
		p, ok := parent[id]
		if !ok || p == "" || hops > len(ids) {
			return 0
		}
		return depthOf(p, hops+1) + 1
	}
	rows := map[int][]string{}
	maxDepth, maxRow := 0, 1
	for _, id := range ids {
		d := depthOf(id, 0)
		depth[id] = d
		rows[d] = append(rows[d], id)
		maxDepth = max(maxDepth, d)
		maxRow = max(maxRow, len(rows[d]))
	}
	g := graph{W: 2*marginX + float64(maxRow)*colW, H: 2*marginY + float64(maxDepth)*rowH + nodeH + 60}
	centre := map[string][2]float64{}
	role := map[string]string{}
	for _, a := range r.Agents {
		role[a.Agent] = a.Role
	}
	for d := 0; d <= maxDepth; d++ {
		row := rows[d]
		for i, id := range row {
			cx := g.W / 2
			if len(row) > 1 {
				cx = marginX + colW/2 + float64(i)*(g.W-2*marginX-colW)/float64(len(row)-1)
			}
			cy := marginY + nodeH/2 + float64(d)*rowH
			centre[id] = [2]float64{cx, cy}
			g.Nodes = append(g.Nodes, gNode{X: cx - nodeW/2, Y: cy - nodeH/2, CX: cx, CY: cy, Label: id, Role: role[id]})
		}
	}
	for _, id := range ids {
		p, c := centre[parent[id]], centre[id]
		if _, ok := centre[parent[id]]; !ok || parent[id] == "" {
			continue
		}
		g.Edges = append(g.Edges, gEdge{
			D:          fmt.Sprintf("M %.1f %.1f L %.1f %.1f", p[0], p[1]+nodeH/2, c[0], c[1]-nodeH/2),
			Title:      fmt.Sprintf("%s delegated to %s", parent[id], id),
			Delegation: true,
		})
	}
	g.addHandoffs(r.Handoffs, centre)
	return g
}

// addHandoffs draws a curved, labelled edge per file handoff between two
// placed agents, growing the canvas to fit the curves.
func (g *graph) addHandoffs(handoffs []Handoff, centre map[string][2]float64) {
	pairCount := map[[2]string]int{}
	for _, h := range handoffs {
		a, okA := centre[h.Writer]
		b, okB := centre[h.Reader]
		if !okA || !okB {
			continue
		}
		k := pairCount[[2]string{h.Writer, h.Reader}]
		pairCount[[2]string{h.Writer, h.Reader}]++
		bend := 46.0 + 0.15*abs(a[0]-b[0]) + 26*float64(k) // farther pairs dip deeper
		x1, y1, x2, y2 := a[0], a[1]+nodeH/2, b[0], b[1]+nodeH/2
		cx, cy, dy := (x1+x2)/2, max(y1, y2)+bend, 14.0 // label below the curve
		if y1 != y2 {                                   // different rows: bow sideways instead
			x1, y1, x2, y2 = a[0]+nodeW/2, a[1], b[0]+nodeW/2, b[1]
			cx, cy, dy = max(x1, x2)+bend, (y1+y2)/2, 4
		}
		g.Edges = append(g.Edges, gEdge{
			D:     fmt.Sprintf("M %.1f %.1f Q %.1f %.1f %.1f %.1f", x1, y1, cx, cy, x2, y2),
			LX:    (x1 + 2*cx + x2) / 4,
			LY:    (y1+2*cy+y2)/4 + dy,
			Label: path.Base(h.Path),
			Title: fmt.Sprintf("%s: written by %s (seq %d), finished (seq %d), read by %s (seq %d)",
				h.Path, h.Writer, h.WriteSeq, h.FinishSeq, h.Reader, h.ReadSeq),
		})
		g.H = max(g.H, cy+marginY)
		g.W = max(g.W, cx+marginX)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

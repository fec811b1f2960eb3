package console

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/daemon/api"
)

// MaxDesignBytes caps one design version a page reads (designs are ≤ 64 KiB).
const MaxDesignBytes = 1 << 20

// searchRow is one search of the searches page.
type searchRow struct {
	api.Search
	R *search.Retained
}

func decodeRetained(raw json.RawMessage) *search.Retained {
	if len(raw) == 0 {
		return nil
	}
	var r search.Retained
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	return &r
}

func (c *Console) searches(ctx context.Context, r *http.Request) (view, error) {
	ss, err := c.cl.Searches(ctx, r.URL.Query().Get("task"))
	if err != nil {
		return view{}, err
	}
	rows := make([]searchRow, 0, len(ss))
	for _, s := range ss {
		rows = append(rows, searchRow{Search: s, R: decodeRetained(s.Retained)})
	}
	return view{name: "searches", title: "workflow searches", data: rows}, nil
}

// versionRow is one design version of a search with its verdicts.
type versionRow struct {
	K                  int
	VsReference        *search.Comparison
	VsChampion         *search.Comparison
	Champion, Retained bool
	Episode            *slotView // nil until its episode finished
}

func (c *Console) searchPage(ctx context.Context, r *http.Request) (view, error) {
	task, id := r.PathValue("task"), r.PathValue("id")
	s, err := c.cl.Search(ctx, task, id)
	if err != nil {
		return view{}, err
	}
	var cmps []search.Comparison
	for _, raw := range s.Comparisons {
		var cmp search.Comparison
		if json.Unmarshal(raw, &cmp) == nil {
			cmps = append(cmps, cmp)
		}
	}
	var champs []search.Comparison
	wasChampion := map[int]bool{0: true}
	for _, raw := range s.Champions {
		var ev search.Comparison
		if json.Unmarshal(raw, &ev) == nil {
			champs = append(champs, ev)
		}
	}
	for _, c := range append(append([]search.Comparison(nil), cmps...), champs...) {
		if c.ChampionChanged {
			wasChampion[c.VersionB] = true
		}
	}
	ret := decodeRetained(s.Retained)
	slots, outs := c.searchSlots(ctx, task, id)
	warning := ""
	if ret != nil {
		warning = search.DeliverablesWarning(outs, ret.Champion)
	}
	var rows []versionRow
	all := append(append([]search.Comparison(nil), cmps...), champs...)
	for _, k := range s.Versions {
		row := versionRow{K: k, Champion: wasChampion[k], Retained: ret != nil && ret.Version != nil && *ret.Version == k,
			Episode: slots["v"+strconv.Itoa(k)]}
		for i := range all {
			if all[i].Candidate != "v"+strconv.Itoa(k) {
				continue
			}
			if all[i].Against == search.AgainstReference {
				row.VsReference = &all[i]
			} else {
				row.VsChampion = &all[i]
			}
		}
		rows = append(rows, row)
	}
	return view{name: "search", title: fmt.Sprintf("search %s of %s", id, task),
		data: map[string]any{"S": s, "R": ret, "Versions": rows, "Reference": slots["reference"], "Warning": warning,
			"Comparisons": cmps, "Champions": champs}}, nil
}

// readSearchText reads a text file of a search through massd, capped.
func (c *Console) readSearchText(ctx context.Context, task, id, name string, limit int64) (string, bool, error) {
	rc, err := c.cl.SearchFile(ctx, task, id, name)
	if err != nil {
		return "", false, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", name, err)
	}
	cut := int64(len(b)) > limit
	if cut {
		b = b[:limit]
	}
	return string(b), cut, nil
}

// versionPage shows design v(k), its diff from v(k-1) and the optimizer's
// account of the change.
func (c *Console) versionPage(ctx context.Context, r *http.Request) (view, error) {
	task, id := r.PathValue("task"), r.PathValue("id")
	k, err := strconv.Atoi(r.PathValue("k"))
	if err != nil || k < 0 {
		return view{}, fmt.Errorf("version %q: want a number, e.g. 3: %w", r.PathValue("k"), api.ErrInvalid)
	}
	text, cut, err := c.readSearchText(ctx, task, id, path.Join(workflow.VersionsDir, workflow.VersionFile(k)), MaxDesignBytes)
	if err != nil {
		return view{}, err
	}
	data := map[string]any{"Task": task, "ID": id, "K": k, "Text": Visible(text), "Cut": cut}
	// A design that is not the strict JSON array runs as text; it is shown
	// as text, with what keeps it from the strict form.
	if _, perr := workflow.Parse(text); perr != nil && !cut {
		data["Free"] = perr.Error()
	}
	if k > 0 {
		if prev, _, err := c.readSearchText(ctx, task, id, path.Join(workflow.VersionsDir, workflow.VersionFile(k-1)), MaxDesignBytes); err == nil {
			data["Diff"] = diffLines(search.Unified(fmt.Sprintf("v%d", k-1), fmt.Sprintf("v%d", k), prev, text))
		}
		if opt, _, err := c.readSearchText(ctx, task, id, fmt.Sprintf("%s/v%d_to_v%d/result.json", search.PromptsDir, k-1, k), MaxDesignBytes); err == nil {
			data["Optimizer"] = pretty(json.RawMessage(opt))
		}
	}
	return view{name: "version", title: fmt.Sprintf("design v%d of search %s", k, id), data: data}, nil
}

// DiffLine is one line of a unified diff with its kind: "add", "del",
// "hunk" or "" (context).
type DiffLine struct{ Kind, Text string }

func diffLines(u string) []DiffLine {
	var out []DiffLine
	for _, l := range strings.Split(strings.TrimSuffix(u, "\n"), "\n") {
		kind := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		}
		out = append(out, DiffLine{Kind: kind, Text: Visible(l)})
	}
	return out
}

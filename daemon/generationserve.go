package daemon

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/serving"
	"github.com/mass-dev/mass/daemon/store"
)

// serveOn serves generation m on its root entry's server and returns the
// model id its calls must name. Runtime LoRA is used only when the
// adapter's base — the parent's weights, which the adapter was trained on —
// is what the server holds: the root entry's own server for generation 1,
// or the serve command's current folder. Otherwise (generation g ≥ 2 on a
// server holding the base) loading the adapter would serve base + gen-g's
// adapter, a model nobody trained, so the serve command is restarted on
// m's merged folder instead; an entry with runtime LoRA and no command
// cannot serve it and says so.
func (b *Builtins) serveOn(ctx context.Context, m store.Model, rootName string, root *config.Model, fresh bool) (string, error) {
	sv := root.Serving
	var cmd *serving.Command
	if len(sv.Command) > 0 || sv.VLLM != nil { // a vLLM recipe composes a serve command
		cmd = b.command(rootName, root)
	}
	if sv.LoRA != "" {
		base, onServer, err := b.adapterBase(ctx, m, rootName, root, cmd)
		if err != nil {
			return "", err
		}
		if onServer {
			if err := (serving.LoRA{BaseURL: root.BaseURL}).Load(ctx, m.Name, m.Adapter); err != nil {
				return "", err
			}
			b.setServes(rootName, m.Name, fmt.Sprintf("%s + adapter %s", base, m.Adapter), false)
			return m.Name, nil
		}
		if cmd == nil {
			return "", fmt.Errorf("model %s (generation %d): its adapter was trained on %s's weights (%s), but the runtime-LoRA server of %s holds %s's: loading it there would serve %s + %s's adapter; add serving.command to %s so that massd serves %s's merged folder, or serve generation %d yourself",
				m.Name, m.G, m.Parent, base, rootName, rootName, rootName, m.Name, rootName, m.Name, m.G)
		}
	}
	served := cmd.ServedName(m.Weights, m.Name)
	restarted := fresh || cmd.Serving() == ""
	if restarted {
		if err := cmd.Restart(ctx, m.Weights, m.Name); err != nil {
			return "", err
		}
	}
	what := m.Weights
	if cmd.Serving() != m.Weights {
		what = fmt.Sprintf("not served now: %s's serve command holds %s", rootName, cmd.Serving())
	}
	b.setServes(rootName, m.Name, what, restarted)
	return served, nil
}

// adapterBase is the folder m's adapter was trained on (its parent's
// weights) and whether the server holds it: the serve command's current
// folder when the entry has one, else the entry's own server, which holds
// the root's weights (so only generation 1's adapter fits it).
func (b *Builtins) adapterBase(ctx context.Context, m store.Model, rootName string, root *config.Model, cmd *serving.Command) (string, bool, error) {
	base := root.Weights
	if m.Parent != rootName {
		p, err := b.gens.st.GetModel(ctx, m.Parent)
		if err != nil {
			return "", false, fmt.Errorf("model %s: parent %s: %w", m.Name, m.Parent, err)
		}
		base = p.Weights
	}
	if base == "" {
		base = rootName
	}
	if cmd != nil {
		return base, cmd.Serving() != "" && cmd.Serving() == base, nil
	}
	return base, m.Parent == rootName, nil
}

// served is what a name's calls reach on its root entry's server.
type served struct{ root, what string }

// setServes records what name's calls reach; restarted says the root's
// serve command now holds only name's folder, so every other name served
// there (the root's own included) is served no more.
func (b *Builtins) setServes(root, name, what string, restarted bool) {
	b.gens.mu.Lock()
	defer b.gens.mu.Unlock()
	if b.gens.serves == nil {
		b.gens.serves = map[string]served{}
	}
	if restarted {
		for n, s := range b.gens.serves {
			if s.root == root {
				b.gens.serves[n] = served{root, "not served now: the serve command restarted on " + name}
			}
		}
		if _, ok := b.gens.serves[root]; !ok {
			b.gens.serves[root] = served{root, "not served now: the serve command restarted on " + name}
		}
	}
	b.gens.serves[name] = served{root, what}
}

// servesOf is what calls to name reach, "" if massd does not know.
func (b *Builtins) servesOf(name string) string {
	b.gens.mu.Lock()
	defer b.gens.mu.Unlock()
	return b.gens.serves[name].what
}

// UnregisterModels takes a removed generation's models out of the
// registry and the model list: a call naming one is refused as unknown
// (404 at the API) from now on, not only after a restart. A serve command
// the model shared with its base keeps running for the others.
func (b *Builtins) UnregisterModels(names []string) {
	b.gens.mu.Lock()
	for _, n := range names {
		delete(b.gens.serves, n)
	}
	b.gens.mu.Unlock()
	for _, n := range names {
		b.Models.Remove(n)
		b.log.Info("model unregistered", "model", n)
	}
}

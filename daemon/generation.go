package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mass-dev/mass/agents/model"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/config"
	"github.com/mass-dev/mass/daemon/serving"
	"github.com/mass-dev/mass/daemon/store"
	"github.com/mass-dev/mass/jobkind/services"
)

// generations is the builtins' part that registers and serves the models
// generations train: rows in the store's models table, clients in the
// model registry, and the serving each root model entry declares.
type generations struct {
	mu       sync.Mutex
	st       *store.Store
	commands map[string]*serving.Command // root entry name → its serve command
	serves   map[string]served           // model name → what its calls reach (model list)
}

// AttachStore gives the builtins massd's store once it is open, lets the
// scripted model look stored tasks (and their recipes) up, and puts the
// generations registered before a restart back in the model registry.
func (b *Builtins) AttachStore(ctx context.Context, st *store.Store) error {
	b.gens.mu.Lock()
	b.gens.st = st
	b.gens.mu.Unlock()
	if b.dry != nil {
		b.dry.SetTasks(storeTasks{st: st, log: b.log})
	}
	ms, err := st.Models(ctx)
	if err != nil {
		return err
	}
	for i := len(ms) - 1; i >= 0; i-- { // newest first: it gets a serve command
		m := ms[i]
		if err := b.serveModel(ctx, m, false); err != nil {
			b.log.Warn("serve registered generation", "model", m.Name, "err", err)
		}
	}
	b.serveRoots()
	return nil
}

// serveRoots starts, in the background, the serve command of every model
// entry that declares one and has weights, when no generation of it is
// served yet: massd serves the base (g = 0) itself, on the entry's weights
// under its model id (so the command passes {name} on).
func (b *Builtins) serveRoots() {
	for name, m := range b.cfg.Models {
		folder := baseFolder(m)
		if folder == "" {
			continue
		}
		cmd := b.command(name, m)
		go func() {
			if err := cmd.StartIdle(context.Background(), folder, m.Model); err != nil {
				b.log.Warn("serve base model", "model", name, "err", err)
			}
		}()
	}
}

// RegisterModel records generation m, made by job jobID, in the store's
// models table and serves it as its root entry says (services.Models).
func (b *Builtins) RegisterModel(ctx context.Context, jobID string, m services.Model) error {
	b.gens.mu.Lock()
	st := b.gens.st
	b.gens.mu.Unlock()
	if st == nil {
		return errors.New("register a generation: massd's store is not open")
	}
	row := store.Model{Name: m.Name, G: m.G, Parent: m.Parent, Weights: m.Weights, Tokenizer: m.Tokenizer,
		Adapter: m.Adapter, JobID: jobID, Created: time.Now().UTC()}
	if err := st.PutModel(ctx, row); err != nil {
		return err
	}
	return b.serveModel(ctx, row, true)
}

// root follows parents to the configured entry a generation descends
// from: its name and entry (nil entry for the scripted model).
func (b *Builtins) root(ctx context.Context, name string) (string, *config.Model, error) {
	for range 1000 {
		if m, ok := b.cfg.Models[name]; ok {
			return name, m, nil
		}
		if name == scripted.Name {
			return name, nil, nil
		}
		row, err := b.gens.st.GetModel(ctx, name)
		if err != nil {
			return "", nil, fmt.Errorf("model %s: %w", name, err)
		}
		name = row.Parent
	}
	return "", nil, fmt.Errorf("model %s: its parents loop", name)
}

// serveModel puts m in the model registry, served as its root entry says.
// fresh is false at start-up, newest generation first: a serve command is
// started then only if none runs, so it serves the newest generation.
func (b *Builtins) serveModel(ctx context.Context, m store.Model, fresh bool) error {
	rootName, root, err := b.root(ctx, m.Parent)
	if err != nil {
		return err
	}
	if root == nil { // the scripted model plays every generation of itself
		c, err := b.Models.Client(rootName)
		if err != nil {
			return err
		}
		b.Models.Add(m.Name, c, true)
		return nil
	}
	if root.Serving == nil {
		return fmt.Errorf("model %s: its root entry %s declares no serving; add serving: {lora: runtime} or {command: [...]}", m.Name, rootName)
	}
	served, err := b.serveOn(ctx, m, rootName, root, fresh)
	if err != nil {
		return err
	}
	mc := *root
	mc.Model = served
	c, err := model.New(ModelConfig(m.Name, &mc), b.log)
	if err != nil {
		return fmt.Errorf("model %s client: %w", m.Name, err)
	}
	b.Models.Add(m.Name, c, false)
	return nil
}

func (b *Builtins) command(name string, root *config.Model) *serving.Command {
	b.gens.mu.Lock()
	defer b.gens.mu.Unlock()
	if c, ok := b.gens.commands[name]; ok {
		return c
	}
	if b.gens.commands == nil {
		b.gens.commands = map[string]*serving.Command{}
	}
	c := &serving.Command{Argv: root.Serving.Command, BaseURL: root.BaseURL}
	if v := root.Serving.VLLM; v != nil {
		// Validated with the configuration, so the recipe composes.
		r, _ := serving.NewRecipe(*v, root.BaseURL, root.Weights)
		c.Argv, c.Env, c.Ready = r.Argv, r.Env, r.Ready
		c.LogFile, c.Supervise, c.Logger = b.Layout.ServingLog(name), true, b.log.With("serving", name)
	}
	b.gens.commands[name] = c
	return c
}

// baseFolder is the folder massd serves an entry's base from itself: its
// serve command's on its weights, its vLLM recipe's on vllm.model (else
// the weights); "" when massd serves nothing for it.
func baseFolder(m *config.Model) string {
	switch {
	case m.Serving == nil:
		return ""
	case m.Serving.VLLM != nil && m.Serving.VLLM.Model != "":
		return m.Serving.VLLM.Model
	case m.Serving.VLLM != nil || len(m.Serving.Command) > 0:
		return m.Weights
	}
	return ""
}

// stopServing ends the serve commands massd started.
func (b *Builtins) stopServing() {
	b.gens.mu.Lock()
	cmds := b.gens.commands
	b.gens.commands = nil
	b.gens.mu.Unlock()
	for _, c := range cmds {
		_ = c.Close()
	}
}

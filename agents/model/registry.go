package model

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Registry holds the model clients a daemon offers, by name. It is built
// at start-up and read concurrently afterwards; Add may run at any time
// (a generation registers its model while jobs run). A configuration that could not be turned into a client is kept with
// its error, so that a job naming that model fails with the reason while
// the other models work.
type Registry struct {
	mu      sync.RWMutex
	clients map[string]Client
	broken  map[string]error
	dryRun  map[string]bool
}

// NewRegistry builds a client for each configuration.
func NewRegistry(cfgs []Config, log *slog.Logger) *Registry {
	r := &Registry{clients: map[string]Client{}, broken: map[string]error{}, dryRun: map[string]bool{}}
	for _, c := range cfgs {
		cl, err := Open(c, log)
		if err != nil {
			r.broken[c.Name] = err
			continue
		}
		r.Add(c.Name, cl, c.DryRun)
	}
	return r
}

// Add registers a client under name; dryRun marks the built-in scripted model.
func (r *Registry) Add(name string, c Client, dryRun bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.broken, name)
	r.clients[name] = c
	r.dryRun[name] = dryRun
}

// Remove unregisters name (a removed generation's model): a later Client
// call naming it is refused as unknown. Removing an unknown name does
// nothing.
func (r *Registry) Remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.clients, name)
	delete(r.broken, name)
	delete(r.dryRun, name)
}

// Has reports whether a model of that name is configured (working or not).
func (r *Registry) Has(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.clients[name]
	_, bad := r.broken[name]
	return ok || bad
}

// Names lists the configured models, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry) namesLocked() []string {
	names := slices.Collect(maps.Keys(r.clients))
	for n := range r.broken {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Client returns the client of the named model. An empty name is refused
// with the list to choose from.
func (r *Registry) Client(name string) (Client, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := strings.Join(r.namesLocked(), ", ")
	if name == "" {
		return nil, fmt.Errorf("several models are configured (%s): choose one with --model", names)
	}
	if err, bad := r.broken[name]; bad {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	c, ok := r.clients[name]
	if !ok {
		return nil, fmt.Errorf("no model named %q; configured: %s", name, names)
	}
	return c, nil
}

// DryRun reports whether name is a dry-run (scripted) model.
func (r *Registry) DryRun(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.dryRun[name]
}

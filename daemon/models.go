package daemon

import (
	"net/url"

	// The judges' providers (openai-responses, anthropic) for the registry.
	_ "github.com/mass-dev/mass/agents/model/providers"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/api"
)

// ModelList describes the models this massd can call, for GET /v1/models:
// the configured ones and the scripted dry-run model. Secrets are left out,
// and so are user info and query strings of the endpoints.
func (b *Builtins) ModelList() []api.Model {
	var out []api.Model
	for _, name := range b.Models.Names() {
		m := api.Model{Name: name, Default: name == b.Env.DefaultModel, DryRun: b.Models.DryRun(name)}
		if c, ok := b.cfg.Models[name]; ok {
			mc := ModelConfig(name, c)
			m.Model, m.BaseURL, m.Serves, m.Provider = mc.Model, publicURL(mc.BaseURL), c.Weights, mc.ProviderName()
		} else if name == scripted.Name {
			m.Model = scripted.Name
		}
		if s := b.servesOf(name); s != "" {
			m.Serves = s
		}
		if _, err := b.Models.Client(name); err != nil {
			m.Error = err.Error()
		}
		out = append(out, m)
	}
	return out
}

// publicURL is u without user info, query or fragment.
func publicURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

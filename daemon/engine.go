package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/sandbox/docker"
)

// EnginePingTimeout bounds healthz's ping of the Docker engine.
const EnginePingTimeout = 3 * time.Second

// engineProbe pings the engine for healthz on a client of its own, so it
// answers whether or not the sandbox runtime was opened, and logs when the
// engine stops (or starts again) answering.
type engineProbe struct {
	mu   sync.Mutex
	cli  *client.Client
	down bool
}

// EngineHealth pings the Docker engine within EnginePingTimeout: healthz's
// engine {reachable, latency_ms}.
func (b *Builtins) EngineHealth(ctx context.Context) *api.EngineHealth {
	p := &b.engine
	h := &api.EngineHealth{}
	p.mu.Lock()
	if p.cli == nil {
		c, err := docker.NewClient("", EnginePingTimeout)
		if err != nil {
			p.mu.Unlock()
			h.Error = err.Error()
			return h
		}
		p.cli = c
	}
	cli := p.cli
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, EnginePingTimeout)
	defer cancel()
	start := time.Now()
	_, err := cli.Ping(ctx)
	h.LatencyMS = time.Since(start).Milliseconds()
	h.Reachable = err == nil
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		h.Error = err.Error()
		if !p.down {
			b.log.Warn("docker engine does not answer a ping; engine calls fail after their deadline", "waited_ms", h.LatencyMS, "err", err)
		}
	} else if p.down {
		b.log.Info("docker engine answers again", "latency_ms", h.LatencyMS)
	}
	p.down = err != nil
	return h
}

func (p *engineProbe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cli != nil {
		p.cli.Close()
		p.cli = nil
	}
}

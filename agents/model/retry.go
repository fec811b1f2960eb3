package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// MaxBackoff caps one retry delay of the client's own backoff.
const MaxBackoff = 30 * time.Second

// Retrier runs the attempts of one request: transient failures (Retryable)
// are retried after the server's retry-after or an exponential backoff
// with jitter; anything else, and the last transient one, is returned
// wrapping ErrEndpoint with the provider and model named. The attempt
// function must send the same request body each time.
type Retrier struct {
	Provider   string
	Name       string
	MaxRetries int
	Backoff    time.Duration
	Log        *slog.Logger
}

// NewRetrier is cfg's retry policy.
func NewRetrier(cfg Config, log *slog.Logger) Retrier {
	cfg = cfg.WithDefaults()
	if log == nil {
		log = slog.Default()
	}
	return Retrier{Provider: cfg.ProviderName(), Name: cfg.Name, MaxRetries: cfg.MaxRetries, Backoff: cfg.Backoff, Log: log}
}

// Do calls attempt until it succeeds, fails for good or ctx ends (then
// ctx.Err()). The Response carries Attempts and ModelTime.
func (r Retrier) Do(ctx context.Context, attempt func(ctx context.Context) (Response, error)) (Response, error) {
	start := time.Now()
	for n := 1; ; n++ {
		resp, err := attempt(ctx)
		if err == nil {
			resp.Attempts, resp.ModelTime = n, time.Since(start)
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		if !Retryable(err) || n > r.MaxRetries {
			return Response{Attempts: n, ModelTime: time.Since(start)},
				fmt.Errorf("%w: %s model %s after %d attempt(s): %w", ErrEndpoint, r.Provider, r.Name, n, err)
		}
		d := r.delay(n, err)
		r.Log.Warn("model call retry", "provider", r.Provider, "attempt", n, "delay", d, "err", err)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return Response{}, ctx.Err()
		}
	}
}

// delay is the server's retry-after when it sent one, else the backoff
// doubled per attempt with jitter, capped at MaxBackoff.
func (r Retrier) delay(attempt int, err error) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return ae.RetryAfter
	}
	d := r.Backoff << (attempt - 1)
	if d > MaxBackoff || d <= 0 {
		d = MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

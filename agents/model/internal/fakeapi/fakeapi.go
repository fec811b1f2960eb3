// Package fakeapi is the bookkeeping the fakes of the hosted model APIs
// (fakeanthropic, fakeresponses) share: the one API key they accept, the
// faults queued for the next requests and the request bodies received.
package fakeapi

import (
	"io"
	"net/http"
	"sync"
)

// Ledger is embedded by a fake's Server. Safe for concurrent use.
type Ledger struct {
	mu     sync.Mutex
	key    string
	faults []string
	bodies [][]byte
	n      int
}

// NewLedger is a ledger accepting key.
func NewLedger(key string) *Ledger { return &Ledger{key: key} }

// SetKey changes the API key the server accepts.
func (l *Ledger) SetKey(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.key = key
}

// Accepts reports whether key is the one accepted.
func (l *Ledger) Accepts(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return key == l.key
}

// Fail queues faults for the next requests, one each, in order.
func (l *Ledger) Fail(faults ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults = append(l.faults, faults...)
}

// Bodies are the raw request bodies received, in order.
func (l *Ledger) Bodies() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.bodies...)
}

// Receive reads r's body (up to 64 MiB) and records it, and returns it
// with the next queued fault ("" for none) and the request's number, from 1.
func (l *Ledger) Receive(r *http.Request) (body []byte, fault string, n int) {
	body, _ = io.ReadAll(io.LimitReader(r.Body, 64<<20))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.bodies = append(l.bodies, body)
	if len(l.faults) > 0 {
		fault, l.faults = l.faults[0], l.faults[1:]
	}
	l.n++
	return body, fault, l.n
}

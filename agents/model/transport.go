package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
)

// bodyExtender adds fields that go-openai has no struct field for (top_k) to
// the JSON body of every POST, so the real go-openai request path is kept.
type bodyExtender struct {
	base     http.RoundTripper
	fields   map[string]any
	maxReply int64
}

// RoundTrip also caps the response body and watches a stream for [DONE]
// (capResponse).
func (t *bodyExtender) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(r)
	capResponse(r.Context(), resp, t.maxReply)
	return resp, err
}

func (t *bodyExtender) roundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil || len(t.fields) == 0 {
		return t.base.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	body, err = extendJSON(body, t.fields)
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r2)
}

// extendJSON appends fields to a JSON object's text, keeping the original
// bytes (and so the key order of everything go-openai wrote) intact. Keys
// already present are left alone.
func extendJSON(body []byte, fields map[string]any) ([]byte, error) {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(body, &present); err != nil {
		return nil, fmt.Errorf("extend request body: not a JSON object: %w", err)
	}
	end := bytes.LastIndexByte(body, '}')
	out := append([]byte(nil), body[:end]...)
	first := len(present) == 0
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if _, ok := present[k]; ok {
			continue
		}
		v, err := json.Marshal(fields[k])
		if err != nil {
			return nil, fmt.Errorf("extend request body: field %s: %w", k, err)
		}
		kj, _ := json.Marshal(k)
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, kj...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, body[end:]...), nil
}

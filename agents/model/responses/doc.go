// Package responses is a model.Client for OpenAI's Responses API
// (POST {base_url}/responses, reasoning.effort, background mode polled
// with GET /responses/{id}), spoken natively on net/http.
package responses

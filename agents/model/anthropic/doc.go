// Package anthropic is a model.Client for Anthropic's Messages API
// (POST {base_url}/v1/messages, streamed, adaptive thinking with
// output_config.effort), spoken natively on net/http.
package anthropic

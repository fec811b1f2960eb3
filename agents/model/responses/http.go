package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/mass-dev/mass/agents/model"
)

// call sends one HTTP request under the per-attempt timeout and decodes a
// 2xx body into out; any other status is a *model.APIError from the
// provider's error body.
func (c *Client) call(ctx context.Context, method, url string, body []byte, out *Response) error {
	ctx, cancel := context.WithTimeout(ctx, c.Config().Timeout)
	defer cancel()
	var rd io.Reader = http.NoBody
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	c.SetKey(req, "Authorization", "Bearer ")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := model.ReadBody(resp.Body, c.Config().ReplyLimit())
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return c.apiError(resp, b)
	}
	if err := json.Unmarshal(b, out); err != nil || out.Object != "response" {
		return fmt.Errorf("%s: %d-byte body is not a response object (%v): %w", method, len(b), err, model.ErrBadReply)
	}
	return nil
}

func (c *Client) apiError(resp *http.Response, b []byte) *model.APIError {
	e := c.APIError(model.ProviderOpenAIResponses, resp, "X-Request-Id", b)
	var er ErrorReply
	if json.Unmarshal(b, &er) == nil && er.Error.Message != "" {
		e.Type = er.Error.Type
		if er.Error.Code != nil && *er.Error.Code != "" {
			e.Type = *er.Error.Code
		}
		e.Message = c.Redact(er.Error.Message)
	}
	return e
}

// result turns a finished response into the model's reply.
func (c *Client) result(r Response) (model.Response, error) {
	switch r.Status {
	case StatusCompleted, StatusIncomplete:
	case StatusFailed:
		e := &model.APIError{Provider: model.ProviderOpenAIResponses, Model: c.Name(), Status: http.StatusBadGateway,
			Type: "response_failed", Message: "response " + r.ID + " failed"}
		if r.Error != nil {
			if r.Error.Code != nil {
				e.Type = *r.Error.Code
			}
			e.Message += ": " + c.Redact(r.Error.Message)
			if e.Type != "server_error" && e.Type != "rate_limit_exceeded" {
				e.Status = http.StatusBadRequest // the request's fault: not retried
			}
		}
		return model.Response{}, e
	default:
		return model.Response{}, fmt.Errorf("response %s ended with status %q: %w", r.ID, r.Status, model.ErrBadReply)
	}
	var text, reason strings.Builder
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				if p.Type == "output_text" {
					text.WriteString(p.Text)
				}
			}
		case "reasoning":
			for _, p := range it.Summary {
				reason.WriteString(p.Text)
			}
		}
	}
	out := model.Response{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
		Content: text.String(), ReasoningContent: reason.String()}, FinishReason: "stop"}
	if r.Status == StatusIncomplete {
		out.FinishReason = "length"
		if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
			out.FinishReason = "content_filter"
		}
	}
	if u := r.Usage; u != nil {
		out.Usage = openai.Usage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
			CompletionTokensDetails: &openai.CompletionTokensDetails{ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}}
	}
	return out, model.CheckReply(out)
}

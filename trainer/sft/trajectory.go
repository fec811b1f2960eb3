package sft

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mass-dev/mass/trainer/chat"
)

// Call is one recorded chat-completion call of an episode (a line of api_requests.jsonl).
type Call struct {
	Seq    int
	Agent  string
	Thread string
	Role   string // orchestrator, worker, auxiliary; "" when the log does not say
	Parent string

	Messages       []chat.Message
	Tools          []chat.Value
	EnableThinking *bool

	Response     chat.Message // the assistant message the model returned
	FinishReason string
	OK           bool // status "ok" with a response
	// Compressed marks the first call after a history compression
	// (record.Compression): every message of its request is from before
	// (already supervised, or the summary and acknowledgement nobody
	// generated in this thread), so a new segment starts here and supervises
	// only what follows.
	Compressed bool
	// Purpose is the record's purpose ("chat_compression" for the side query that wrote a
	// summary: only its response is supervised, the history it read was supervised in its
	// own thread).
	Purpose string
}

type callJSON struct {
	Seq     int    `json:"seq"`
	Agent   string `json:"agent"`
	Thread  string `json:"thread"`
	Role    string `json:"role"`
	Parent  string `json:"parent"`
	Status  string `json:"status"`
	Request struct {
		Messages  []json.RawMessage `json:"messages"`
		Tools     []chat.Value      `json:"tools"`
		ExtraBody struct {
			Kwargs struct {
				EnableThinking *bool `json:"enable_thinking"`
			} `json:"chat_template_kwargs"`
		} `json:"extra_body"`
		Kwargs struct {
			EnableThinking *bool `json:"enable_thinking"`
		} `json:"chat_template_kwargs"`
	} `json:"request"`
	Response    json.RawMessage `json:"response"`
	Compression json.RawMessage `json:"compression"`
	Purpose     string          `json:"purpose"`
}

// maxLine bounds one JSONL record (a long conversation can be tens of MB).
const maxLine = 512 << 20

// ReadCalls reads api_requests.jsonl (docs/formats.md). Records with status "error" are
// returned with OK false. A malformed line is an error naming the line.
func ReadCalls(r io.Reader) ([]Call, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var calls []Call
	cache := messageCache{}
	for line := 1; sc.Scan(); line++ {
		if len(trimSpace(sc.Bytes())) == 0 {
			continue
		}
		c, err := parseCall(sc.Bytes(), cache)
		if err != nil {
			return nil, fmt.Errorf("api_requests line %d: %w", line, err)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read api_requests: %w", err)
	}
	return calls, nil
}

// messageCache decodes each distinct message once: every call of a thread resends the
// whole history, so a thread of n calls holds each message up to n times.
type messageCache map[string]*chat.Message

func (mc messageCache) decode(raws []json.RawMessage) ([]chat.Message, error) {
	out := make([]chat.Message, len(raws))
	for i, raw := range raws {
		if m, ok := mc[string(raw)]; ok {
			out[i] = *m
			continue
		}
		m := new(chat.Message)
		if err := json.Unmarshal(raw, m); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		mc[string(raw)] = m
		out[i] = *m
	}
	return out, nil
}

func parseCall(b []byte, cache messageCache) (Call, error) {
	var j callJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return Call{}, err
	}
	msgs, err := cache.decode(j.Request.Messages)
	if err != nil {
		return Call{}, fmt.Errorf("request: %w", err)
	}
	c := Call{Seq: j.Seq, Agent: j.Agent, Thread: j.Thread, Role: j.Role, Parent: j.Parent,
		Messages: msgs, Tools: j.Request.Tools, EnableThinking: j.Request.ExtraBody.Kwargs.EnableThinking,
		Compressed: len(j.Compression) > 0 && string(j.Compression) != "null", Purpose: j.Purpose}
	if c.EnableThinking == nil {
		c.EnableThinking = j.Request.Kwargs.EnableThinking
	}
	if c.Thread == "" {
		c.Thread = c.Agent
	}
	if j.Status != "" && j.Status != "ok" {
		return c, nil
	}
	if len(j.Response) == 0 || string(j.Response) == "null" {
		return c, nil
	}
	resp, finish, err := parseResponse(j.Response)
	if err != nil {
		return Call{}, fmt.Errorf("response: %w", err)
	}
	c.Response, c.FinishReason, c.OK = resp, finish, true
	return c, nil
}

// parseResponse accepts the recorded form {content, reasoning_content, tool_calls,
// finish_reason} and the OpenAI completion form {choices:[{message, finish_reason}]}.
func parseResponse(raw json.RawMessage) (chat.Message, string, error) {
	var probe struct {
		Choices []struct {
			Message      json.RawMessage `json:"message"`
			FinishReason string          `json:"finish_reason"`
		} `json:"choices"`
		FinishReason string `json:"finish_reason"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return chat.Message{}, "", err
	}
	msg, finish := raw, probe.FinishReason
	if len(probe.Choices) > 0 {
		msg, finish = probe.Choices[0].Message, probe.Choices[0].FinishReason
	}
	var m chat.Message
	if err := json.Unmarshal(msg, &m); err != nil {
		return chat.Message{}, "", err
	}
	m.Role = "assistant"
	return m, finish, nil
}

// ReadProxyLog reads the reference MASS proxy log: gzip-compressed JSONL whose lines hold an
// OpenAI chat request under "request" and the completion under "response". Calls are
// numbered in file order; the thread is the line's "thread" or "agent" when present, else a
// digest of the conversation's first system and user messages.
func ReadProxyLog(r io.Reader) ([]Call, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("proxy log: %w", err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var calls []Call
	cache := messageCache{}
	for line := 1; sc.Scan(); line++ {
		if len(trimSpace(sc.Bytes())) == 0 {
			continue
		}
		var j struct {
			Thread   string          `json:"thread"`
			Agent    string          `json:"agent"`
			Role     string          `json:"role"`
			Request  json.RawMessage `json:"request"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return nil, fmt.Errorf("proxy log line %d: %w", line, err)
		}
		if len(j.Request) == 0 {
			return nil, fmt.Errorf("proxy log line %d: no request", line)
		}
		rec := fmt.Sprintf(`{"seq":%d,"agent":%q,"thread":%q,"role":%q,"request":%s,"response":%s}`,
			line, j.Agent, j.Thread, j.Role, j.Request, orNull(j.Response))
		c, err := parseCall([]byte(rec), cache)
		if err != nil {
			return nil, fmt.Errorf("proxy log line %d: %w", line, err)
		}
		if c.Thread == "" {
			c.Thread = threadDigest(c.Messages)
		}
		calls = append(calls, c)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read proxy log: %w", err)
	}
	return calls, nil
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// threadDigest names a thread by its opening messages: every call of one agent repeats them.
func threadDigest(msgs []chat.Message) string {
	h := sha256.New()
	n := 0
	for _, m := range msgs {
		if m.Role == "system" || m.Role == "user" {
			fmt.Fprintf(h, "%s\x00%s\x00", m.Role, m.Content)
			n++
		}
		if m.Role == "user" || n == 2 {
			break
		}
	}
	return "thread-" + hex.EncodeToString(h.Sum(nil))[:12]
}

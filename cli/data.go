package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/trainer/chat"
	"github.com/mass-dev/mass/trainer/chat/jinja"
	"github.com/mass-dev/mass/trainer/tokenizer"
)

// dataCommand groups the local SFT-data tools; none of them needs massd.
func dataCommand() *cli.Command {
	tokFlag := &cli.StringFlag{Name: "tokenizer", Usage: "model `DIR` holding tokenizer.json and tokenizer_config.json", Required: true}
	return &cli.Command{
		Name:  "data",
		Usage: "tokenize, render chats and build SFT datasets locally (no daemon needed)",
		Subcommands: []*cli.Command{
			{
				Name:   "tokenize",
				Usage:  `read JSONL {"text"} on stdin, write {"ids"} per line in order`,
				Flags:  []cli.Flag{tokFlag},
				Action: dataTokenize,
			},
			{
				Name: "render-chat",
				Usage: `read JSONL {"messages","tools"?,"add_generation_prompt"?, …template kwargs} on stdin, ` +
					`write {"text","ids","assistant_mask"} per line ("assistant_mask": null and "mask_error" when ` +
					`the turns cannot be masked); a line the template raises on stops the run with "stdin line N: …"`,
				Flags:  []cli.Flag{tokFlag},
				Action: dataRenderChat,
			},
			dataBuildCommand(tokFlag),
			dataShowCommand(tokFlag),
			dataSynthCommand(),
		},
	}
}

// dataLines calls fn for each non-empty stdin line and writes what it returns, one line each.
func dataLines(c *cli.Context, fn func(line []byte) ([]byte, error)) error {
	in := c.App.Reader
	if in == nil {
		return fmt.Errorf("no stdin")
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	out := bufio.NewWriterSize(c.App.Writer, 1<<20)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		b, err := fn(sc.Bytes())
		if err != nil {
			out.Flush()
			return fmt.Errorf("stdin line %d: %w", n, err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		out.Flush()
		return fmt.Errorf("read stdin: %w", err)
	}
	return out.Flush()
}

func dataTokenize(c *cli.Context) error {
	tok, err := tokenizer.Load(c.String("tokenizer"))
	if err != nil {
		return err
	}
	return dataLines(c, func(line []byte) ([]byte, error) {
		var in struct {
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(line, &in); err != nil {
			return nil, err
		}
		if in.Text == nil {
			return nil, fmt.Errorf(`want {"text": "..."}`)
		}
		return json.Marshal(struct {
			IDs []int32 `json:"ids"`
		}{tok.Encode(*in.Text)})
	})
}

// dataRenderChat renders each stdin line with the model's chat template. A line the
// template raises on (or that is not a conversation) stops the run: the error names the
// line ("stdin line N: …") and nothing is printed for it. A line that renders but whose
// assistant turns cannot be masked prints its text and ids with "assistant_mask": null
// and the reason in "mask_error".
func dataRenderChat(c *cli.Context) error {
	dir := c.String("tokenizer")
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return err
	}
	tmpl, err := chat.LoadTemplate(dir)
	if err != nil {
		return err
	}
	return dataLines(c, func(line []byte) ([]byte, error) {
		r, err := renderChatLine(tmpl, line)
		if r == nil {
			return nil, err
		}
		out := struct {
			Text          string  `json:"text"`
			IDs           []int32 `json:"ids"`
			AssistantMask []int   `json:"assistant_mask"`
			MaskError     string  `json:"mask_error,omitempty"`
		}{Text: r.Text}
		e := chat.Encode(tok, r)
		out.IDs = e.IDs
		if err != nil {
			out.MaskError = err.Error()
		} else {
			out.AssistantMask = make([]int, len(e.AssistantMask))
			for i, m := range e.AssistantMask {
				out.AssistantMask[i] = int(m)
			}
		}
		return json.Marshal(out)
	})
}

// renderChatLine renders one {messages, tools?, add_generation_prompt?, …kwargs} line;
// every other key is a template variable (enable_thinking, …).
func renderChatLine(tmpl *chat.Template, line []byte) (*chat.Rendered, error) {
	v, err := chat.ParseJSON(string(line))
	if err != nil {
		return nil, err
	}
	if v.Kind != chat.Object {
		return nil, fmt.Errorf(`want {"messages": [...], ...}`)
	}
	msgs, ok := v.Get("messages")
	if !ok || msgs.Kind != chat.Array {
		return nil, fmt.Errorf(`want "messages": a list of messages`)
	}
	opt := chat.Options{Kwargs: map[string]jinja.Value{}}
	var tools jinja.Value
	var toolList []chat.Value
	for _, m := range v.Members {
		switch m.Key {
		case "messages":
		case "tools":
			if m.Value.Kind != chat.Null {
				tools, toolList = chat.JinjaValue(m.Value), m.Value.Items
			}
		case "add_generation_prompt":
			opt.AddGenerationPrompt = m.Value.Kind == chat.Bool && m.Value.Bool
		default:
			opt.Kwargs[m.Key] = chat.JinjaValue(m.Value)
		}
	}
	if tmpl.Family != chat.Jinja && onlyThinking(&opt) {
		var native []chat.Message
		if err := json.Unmarshal([]byte(msgs.Python()), &native); err != nil {
			return nil, err
		}
		return tmpl.Render(native, toolList, opt)
	}
	return tmpl.RenderValues(chat.RawMessages(msgs.Items), tools, opt)
}

// onlyThinking moves a boolean enable_thinking into opt.EnableThinking and reports whether
// no other kwargs are left (the native renderers take no others).
func onlyThinking(opt *chat.Options) bool {
	if v, ok := opt.Kwargs["enable_thinking"].(bool); ok && len(opt.Kwargs) == 1 {
		opt.EnableThinking, opt.Kwargs = &v, nil
	}
	return len(opt.Kwargs) == 0
}

package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/trainer/chat"
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
				Usage: `read JSONL {"messages","tools","add_generation_prompt","enable_thinking"?} on stdin, ` +
					`write {"text","ids","assistant_mask"} per line`,
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
		var in struct {
			Messages            []chat.Message `json:"messages"`
			Tools               []chat.Value   `json:"tools"`
			AddGenerationPrompt bool           `json:"add_generation_prompt"`
			EnableThinking      *bool          `json:"enable_thinking"`
		}
		if err := json.Unmarshal(line, &in); err != nil {
			return nil, err
		}
		r, err := tmpl.Render(in.Messages, in.Tools, chat.Options{AddGenerationPrompt: in.AddGenerationPrompt, EnableThinking: in.EnableThinking})
		if err != nil {
			return nil, err
		}
		e := chat.Encode(tok, r)
		mask := make([]int, len(e.AssistantMask))
		for i, m := range e.AssistantMask {
			mask[i] = int(m)
		}
		return json.Marshal(struct {
			Text          string  `json:"text"`
			IDs           []int32 `json:"ids"`
			AssistantMask []int   `json:"assistant_mask"`
		}{r.Text, e.IDs, mask})
	})
}

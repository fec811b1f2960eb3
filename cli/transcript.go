package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/episodefmt"
)

// DefaultTranscriptWidth is where `episode transcript` cuts long lines.
const DefaultTranscriptWidth = 160

func episodeTranscript(c *cli.Context) error {
	id, err := oneArg(c, "episode ID")
	if err != nil {
		return err
	}
	rc, err := clientFrom(c).EpisodeFile(c.Context, id, episodefmt.RequestsFile)
	if err != nil {
		return err
	}
	defer rc.Close()
	ts, err := console.ReadTranscript(rc)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, ts)
	}
	w, width, reasoning := c.App.Writer, c.Int("width"), c.Bool("reasoning")
	for _, t := range ts {
		pad := strings.Repeat("  ", t.Depth)
		fmt.Fprintf(w, "%s== %s (%s", pad, plainText(t.ID), plainText(t.Role))
		if t.Parent != "" {
			fmt.Fprintf(w, ", started by %s", plainText(t.Parent))
		}
		fmt.Fprintf(w, "): %d calls, %d prompt / %d output tokens\n", len(t.Calls), t.Prompt, t.Output)
		for _, call := range t.Calls {
			printCall(w, pad+"  ", call, width, reasoning)
		}
	}
	return nil
}

func printCall(w io.Writer, pad string, call console.Call, width int, reasoning bool) {
	fmt.Fprintf(w, "%s-- call #%d: %d + %d tokens, %.0f ms, %s\n", pad, call.Seq, call.Response.Usage.Prompt,
		call.Response.Usage.Completion, call.Millis, plainText(call.Response.Finish))
	if call.Status == "error" {
		fmt.Fprintf(w, "%s   error: %s\n", pad, cut(call.Error, width))
	}
	for _, m := range call.New {
		fmt.Fprintf(w, "%s   [%s] %s\n", pad, plainText(m.Role), cut(m.Content, width))
	}
	if reasoning && call.Response.Reasoning != "" {
		fmt.Fprintf(w, "%s   <reasoning> %s\n", pad, cut(call.Response.Reasoning, width))
	}
	if call.Response.Content != "" {
		fmt.Fprintf(w, "%s   [answer] %s\n", pad, cut(call.Response.Content, width))
	}
	for _, tc := range call.Response.ToolCalls {
		fmt.Fprintf(w, "%s   -> %s(%s)\n", pad, plainText(tc.Function.Name), cut(tc.Function.Arguments, width))
	}
}

// cut puts s on one line with escapes shown and cuts it to width runes.
func cut(s string, width int) string {
	s = console.Visible(strings.ReplaceAll(s, "\n", " ⏎ "))
	if width > 0 {
		s = truncate(s, width)
	}
	return s
}

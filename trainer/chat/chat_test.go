package chat

import (
	"bufio"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/mass-dev/mass/trainer/tokenizer"
)

// The fixtures live in ../tokenizer/testdata (one copy of the 11 MB tokenizer.json).
const fixtureDir = "../tokenizer/testdata"

type chatCase struct {
	Messages            []Message `json:"messages"`
	Tools               []Value   `json:"tools"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	EnableThinking      *bool     `json:"enable_thinking"`
	Text                string    `json:"text"`
	IDs                 []int32   `json:"ids"`
	AssistantMask       []uint8   `json:"assistant_mask"`
}

func readChatCases(t *testing.T) []chatCase {
	f, err := os.Open(fixtureDir + "/chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []chatCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var c chatCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestChatFixture(t *testing.T) {
	tok, err := tokenizer.Load(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := LoadTemplate(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tmpl.Family, Qwen3; got != want {
		t.Fatalf("family: got %s, want %s", got, want)
	}
	cases := readChatCases(t)
	if len(cases) < 40 {
		t.Fatalf("only %d cases", len(cases))
	}
	for i, c := range cases {
		r, err := tmpl.Render(c.Messages, c.Tools, Options{AddGenerationPrompt: c.AddGenerationPrompt, EnableThinking: c.EnableThinking})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if r.Text != c.Text {
			t.Errorf("case %d text:\n got %q\nwant %q", i, r.Text, c.Text)
			continue
		}
		e := Encode(tok, r)
		if !reflect.DeepEqual(e.IDs, c.IDs) {
			t.Errorf("case %d ids differ", i)
			continue
		}
		if !reflect.DeepEqual(e.AssistantMask, c.AssistantMask) {
			t.Errorf("case %d mask:\n got %v\nwant %v", i, e.AssistantMask, c.AssistantMask)
		}
	}
}

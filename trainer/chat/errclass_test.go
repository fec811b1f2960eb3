package chat

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

// A folder without tokenizer_config.json is ErrNotFound; one whose config
// has no chat template, a broken config and malformed JSON are ErrInvalid.
func TestErrorClasses(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadTemplate(dir); !errors.Is(err, errclass.ErrNotFound) {
		t.Errorf("no tokenizer_config.json: %v, want ErrNotFound", err)
	}
	cfg := filepath.Join(dir, "tokenizer_config.json")
	for body, want := range map[string]error{`{"eos_token":"x"}`: ErrUnknownTemplate, `{"chat_template":`: errclass.ErrInvalid} {
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadTemplate(dir); !errors.Is(err, want) || !errors.Is(err, errclass.ErrInvalid) {
			t.Errorf("tokenizer_config.json %s: %v, want %v (class ErrInvalid)", body, err, want)
		}
	}
	if _, err := ParseJSON(`{"a":`); !errors.Is(err, ErrSyntax) || !errors.Is(err, errclass.ErrInvalid) {
		t.Errorf("cut JSON: %v, want ErrSyntax (class ErrInvalid)", err)
	}
}

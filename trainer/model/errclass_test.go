package model

import (
	"errors"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

// The model folder's errors carry the shared classes: an unsupported
// config is ErrInvalid, a folder without config.json ErrNotFound, a model
// too big for the host ErrTooLarge.
func TestErrorClasses(t *testing.T) {
	_, unsupported := ParseConfig([]byte(`{"model_type":"llama","vocab_size":10,"hidden_size":8,"intermediate_size":16,"num_hidden_layers":1,"num_attention_heads":2}`))
	_, missing := LoadConfig(t.TempDir())
	tooBig := Plan{Params: 1 << 30, DiskBF16: 2 << 30, HostFP32: 4 << 30, Available: 1 << 30}.Fits()
	for _, c := range []struct {
		name       string
		err, class error
	}{
		{"unsupported config", unsupported, errclass.ErrInvalid},
		{"no config.json", missing, errclass.ErrNotFound},
		{"too big for the host", tooBig, errclass.ErrTooLarge},
	} {
		if !errors.Is(c.err, c.class) {
			t.Errorf("%s: %v, want class %v", c.name, c.err, c.class)
		}
	}
}

//go:build masscuda || masscudaemu

package cudabackend

import (
	"github.com/mass-dev/mass/trainer"
	"github.com/mass-dev/mass/trainer/lora"
	"github.com/mass-dev/mass/trainer/model"
)

// OpenAny opens one device, or several when opt names more than one device or replica.
func OpenAny(cfg *model.Config, m *model.Model, a *lora.Adapter, seed uint32, opt Options) (trainer.Backend, error) {
	return Open(cfg, m, a, seed, opt)
}

package export

import (
	"testing"

	"github.com/mass-dev/mass/trainer/model"
)

func FuzzParseAdapterConfig(f *testing.F) {
	f.Add([]byte(`{"peft_type":"LORA","task_type":"CAUSAL_LM","r":64,"lora_alpha":128,"lora_dropout":0.05,"target_modules":["q_proj","v_proj"],"bias":"none"}`))
	f.Add([]byte(`{"peft_type":"LORA","r":8,"lora_alpha":16,"target_modules":["q_proj"],"use_dora":true}`))
	f.Add([]byte(`{"peft_type":"IA3"}`))
	f.Add([]byte(`{"peft_type":"LORA","r":8,"lora_alpha":16,"target_modules":".*\\.(q|v)_proj","rank_pattern":{"q_proj":4},"alpha_pattern":{"v_proj":2},"init_lora_weights":"gaussian"}`))
	f.Add([]byte(`{"peft_type":"LORA","r":8,"lora_alpha":16,"target_modules":"all-linear","exclude_modules":["down_proj"],"init_lora_weights":"pissa"}`))
	mc, err := model.Preset("micro")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseAdapterConfig(b, mc)
		if err != nil {
			return
		}
		if c.Validate() != nil || c.Rank <= 0 {
			t.Fatalf("accepted invalid config %+v", c)
		}
	})
}

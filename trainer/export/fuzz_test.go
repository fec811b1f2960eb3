package export

import "testing"

func FuzzParseAdapterConfig(f *testing.F) {
	f.Add([]byte(`{"peft_type":"LORA","task_type":"CAUSAL_LM","r":64,"lora_alpha":128,"lora_dropout":0.05,"target_modules":["q_proj","v_proj"],"bias":"none"}`))
	f.Add([]byte(`{"peft_type":"LORA","r":8,"lora_alpha":16,"target_modules":["q_proj"],"use_dora":true}`))
	f.Add([]byte(`{"peft_type":"IA3"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseAdapterConfig(b)
		if err != nil {
			return
		}
		if c.Validate() != nil || c.Rank <= 0 {
			t.Fatalf("accepted invalid config %+v", c)
		}
	})
}

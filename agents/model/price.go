package model

import (
	"fmt"
	"math"
)

// Price is what a model's API bills, in US dollars per million tokens
// (an entry of massd.yaml's top-level prices table).
type Price struct {
	InputPerMTok  float64 `json:"input_per_mtok" yaml:"input_per_mtok"`
	OutputPerMTok float64 `json:"output_per_mtok" yaml:"output_per_mtok"`
}

// Cost is the dollars of in billed input and out billed output tokens
// (output includes reasoning/thinking tokens, as the APIs bill them).
func (p Price) Cost(in, out int64) float64 {
	return (float64(in)*p.InputPerMTok + float64(out)*p.OutputPerMTok) / 1e6
}

// Check refuses a negative or non-finite price.
func (p Price) Check() error {
	for _, v := range []float64{p.InputPerMTok, p.OutputPerMTok} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("price %v per million tokens must be a finite number ≥ 0", v)
		}
	}
	return nil
}

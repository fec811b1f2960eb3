package model

import (
	"math"
	"testing"
)

func TestPriceCost(t *testing.T) {
	p := Price{InputPerMTok: 5, OutputPerMTok: 25}
	if got, want := p.Cost(200_000, 40_000), 1.0+1.0; math.Abs(got-want) > 1e-12 {
		t.Errorf("Cost = %v, want %v", got, want)
	}
	if (Price{InputPerMTok: -1}).Check() == nil || (Price{OutputPerMTok: math.NaN()}).Check() == nil || p.Check() != nil {
		t.Error("Check misjudges")
	}
}

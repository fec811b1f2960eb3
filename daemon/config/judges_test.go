package config

import (
	"errors"
	"slices"
	"testing"
)

func TestJudges(t *testing.T) {
	c := Default()
	c.DataDir, c.Socket = "/tmp/d", "/tmp/d/s.sock"
	if err := c.Parse([]byte("judges:\n  - model: judge-a\n    seeds: [1, 2]\n  - model: judge-b\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Judges[1].Seeds, DefaultJudgeSeeds) || !c.JudgeModels()["judge-a"] || len(c.JudgeModels()) != 2 {
		t.Errorf("judges %+v", c.Judges)
	}
	for doc, field := range map[string]string{
		"judges:\n  - model: ''\n":                   "judges[0].model",
		"judges:\n  - model: a\n  - model: a\n":      "judges[1].model",
		"judges:\n  - model: a\n    seeds: [4, 4]\n": "judges[0].seeds",
	} {
		c := Default()
		c.DataDir, c.Socket = "/tmp/d", "/tmp/d/s.sock"
		if err := c.Parse([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%q: %v, want an error on %s", doc, err, field)
		}
	}
}

package jobkind

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mass-dev/mass/errclass"
)

type sampleParams struct {
	Seconds float64  `json:"seconds"`
	Model   string   `json:"model,omitempty"`
	Tags    []string `json:"tags"`
	Skip    string   `json:"-"`
}

func TestDecodeParams(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"secnds":1}`, `secnds: unknown field (did you mean "seconds"?); known fields: model, seconds, tags`},
		{`{"zzzzzzzz":1}`, `zzzzzzzz: unknown field; known fields: model, seconds, tags`},
		{`{"seconds":"x"}`, `seconds: got a JSON string, want a number`},
		{`{"tags":[1]}`, `tags: got a JSON number, want a string`},
		{`{"model":3}`, `model: got a JSON number, want a string`},
		{`{"seconds":`, `unexpected EOF`},
	}
	for _, tt := range tests {
		var p sampleParams
		err := DecodeParams(json.RawMessage(tt.in), &p)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, errclass.ErrInvalid) {
			t.Errorf("DecodeParams(%s) = %v, want it to say %q, of class invalid", tt.in, err, tt.want)
		}
		var fe *errclass.FieldError
		if name, _, _ := strings.Cut(tt.want, ":"); !strings.Contains(name, " ") && (!errors.As(err, &fe) || fe.Field != name) {
			t.Errorf("DecodeParams(%s) = %#v, want a FieldError naming %q", tt.in, err, name)
		}
	}
	var p sampleParams
	if err := DecodeParams(json.RawMessage(` `), &p); err != nil {
		t.Errorf("empty params: %v", err)
	}
	if err := DecodeParams(json.RawMessage(`{"seconds":2,"model":"m"}`), &p); err != nil || p.Seconds != 2 || p.Model != "m" {
		t.Errorf("good params: %+v, %v", p, err)
	}
}

// The fields of an embedded struct are known as encoding/json promotes them.
func TestDecodeParamsEmbedded(t *testing.T) {
	var p struct {
		sampleParams
		Extra int `json:"extra"`
	}
	err := DecodeParams(json.RawMessage(`{"modle":"m"}`), &p)
	if err == nil || !strings.Contains(err.Error(), `did you mean "model"?); known fields: extra, model, seconds, tags`) {
		t.Errorf("DecodeParams = %v, want the embedded fields known", err)
	}
	if err := DecodeParams(json.RawMessage(`{"model":"m","extra":2}`), &p); err != nil || p.Model != "m" || p.Extra != 2 {
		t.Errorf("good params: %+v, %v", p, err)
	}
}

func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{`{"secnds":1}`, `{"seconds":"x"}`, `{"tags":[1,2]}`, `[]`, `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p sampleParams
		if err := DecodeParams(b, &p); err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}

func TestCheckedRunsCheckOnParsedParams(t *testing.T) {
	type p struct {
		Judge string `json:"judge"`
	}
	parse := func(raw json.RawMessage) (p, error) {
		var v p
		return v, DecodeParams(raw, &v)
	}
	errExternal := errors.New("external judge")
	check := func(v p) error {
		if v.Judge == "outside" {
			return errExternal
		}
		return nil
	}
	if v, err := Checked(parse, check)(json.RawMessage(`{"judge":"inside"}`)); err != nil || v.Judge != "inside" {
		t.Fatalf("good params: %+v, %v", v, err)
	}
	if _, err := Checked(parse, check)(json.RawMessage(`{"judge":"outside"}`)); !errors.Is(err, errExternal) {
		t.Fatalf("check not run: %v", err)
	}
	if _, err := Checked(parse, check)(json.RawMessage(`{"jduge":"x"}`)); err == nil || errors.Is(err, errExternal) {
		t.Fatalf("a parse error must come first, without the check: %v", err)
	}
	if v, err := Checked(parse, nil)(json.RawMessage(`{"judge":"outside"}`)); err != nil || v.Judge != "outside" {
		t.Fatalf("no check: %+v, %v", v, err)
	}
}

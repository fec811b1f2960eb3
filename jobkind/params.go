package jobkind

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/internal/suggest"
)

// DecodeParams decodes a job's params into v (a pointer to a struct with
// json tags), rejecting unknown fields and wrong types with an
// *errclass.FieldError that names the field and says what would be
// accepted: the known fields, the closest one to a misspelling, or the
// expected type. Every error is of class errclass.ErrInvalid. Empty params
// leave v as it is.
func DecodeParams(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	known := fieldNames(v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &errclass.FieldError{Field: te.Field, Msg: fmt.Sprintf("got a JSON %s, want %s", te.Value, jsonType(te.Type))}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		msg := "unknown field"
		if near := suggest.Closest(name, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return &errclass.FieldError{Field: name, Msg: fmt.Sprintf("%s; known fields: %s", msg, strings.Join(known, ", "))}
	}
	return fmt.Errorf("%v (known fields: %s): %w", err, strings.Join(known, ", "), errclass.ErrInvalid)
}

// fieldNames lists the json names of the struct v points to, sorted.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fieldNames(reflect.New(f.Type).Interface())...) // promoted, as encoding/json does
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list (" + jsonType(t.Elem()) + " each)"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// Checked is parse followed by check, when check is set: the one parse a
// kind's Validate and Run share, with massd's own check (such as "no
// external judge") on the parsed params.
func Checked[P any](parse func(json.RawMessage) (P, error), check func(P) error) func(json.RawMessage) (P, error) {
	return func(raw json.RawMessage) (P, error) {
		p, err := parse(raw)
		if err == nil && check != nil {
			err = check(p)
		}
		return p, err
	}
}

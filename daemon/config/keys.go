package config

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// unknownField matches yaml.v3's error for a key that no field takes.
var unknownField = regexp.MustCompile(`field (\S+) not found in type (\S+)`)

// explainUnknown adds the keys that exist to yaml's "field x not found in
// type T" so that a typo's fix is in the message.
func explainUnknown(msg string) string {
	keys := yamlKeys()
	return unknownField.ReplaceAllStringFunc(msg, func(m string) string {
		sub := unknownField.FindStringSubmatch(m)
		known, ok := keys[sub[2]]
		if !ok {
			return m
		}
		return m + " (known keys: " + strings.Join(known, ", ") + ")"
	})
}

// yamlKeys maps every struct type reachable from Config (by its
// reflect name, as yaml prints it) to the keys it accepts.
func yamlKeys() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil || t.PkgPath() == "time" {
			return
		}
		var keys []string
		out[t.String()] = keys // mark before recursing
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			keys = append(keys, name)
			walk(f.Type)
		}
		slices.Sort(keys)
		out[t.String()] = keys
	}
	walk(reflect.TypeFor[Config]())
	return out
}

package jinja

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzTemplate compiles and renders arbitrary template text: it must return an error or a
// result, never panic or run away.
func FuzzTemplate(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/templates/*.jinja")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"{{ x }}", "{% for a in b %}{{ a }}{% endfor %}", "{{ 'a' * 99999999999 }}",
		"{% macro m(n) %}{{ m(n) }}{% endmacro %}{{ m(1) }}", "{{ range(10**9) }}", "{{ (((1))) }}", "{% raw %}x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tm, err := Compile(src)
		if err != nil {
			return
		}
		msgs := List{}
		for _, role := range []string{"system", "user", "assistant", "tool"} {
			d := NewDict()
			d.Set("role", role)
			d.Set("content", "c")
			msgs = append(msgs, d)
		}
		_, _ = tm.Render(map[string]Value{"messages": msgs, "tools": nil, "add_generation_prompt": true, "x": List{int64(1)}})
	})
}

package tools

import (
	"fmt"
	"strings"
)

// todos serves todo_write: the list (checked by Validate) is kept whole
// in the call's ledger detail, so the episode record holds every version
// of the plan; the model reads the list back.
func (e *Env) todos(a Args, o *outcome) error {
	items, _ := a.Value("todos").([]any)
	list := make([]map[string]any, 0, len(items))
	var b strings.Builder
	for _, it := range items {
		m := it.(map[string]any)
		id := m["id"].(string)
		list = append(list, map[string]any{"id": id, "content": m["content"], "status": m["status"]})
		fmt.Fprintf(&b, "- [%s] %s\n", m["status"], m["content"])
	}
	o.merge(map[string]any{"todos": list})
	if len(list) == 0 {
		o.text = "Todo list cleared."
		return nil
	}
	o.text = "Todos updated. Current list:\n" + b.String()
	return nil
}

// merge adds keys to the ledger detail of the call.
func (o *outcome) merge(kv map[string]any) {
	for k, v := range kv {
		o.setDetail(k, v)
	}
}

package sft

import (
	"bufio"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/mass-dev/mass/trainer/chat"
)

// Row formats of rows.jsonl.
const (
	FormatNative = "native"
	// FormatReference writes rows as the reference pipeline (SakanaAI/mass
	// training/prepare_sft_data.py) does, for its load_windows: an integer task, a
	// condition, a weight and the window's header length.
	FormatReference = "reference"
)

// ReferenceFields are the fields a reference-written row carries besides ours; they are
// read and kept (windows.bin does not carry them).
type ReferenceFields struct {
	Condition    string   `json:"condition,omitempty"`
	Weight       *float64 `json:"weight,omitempty"`
	HeaderTokens int      `json:"header_tokens,omitempty"`
	Blocks       []int    `json:"blocks,omitempty"`
	CtxBlocks    []int    `json:"ctx_blocks,omitempty"`
	LossBlocks   []int    `json:"loss_blocks,omitempty"`
}

// conditionTask is the reference's task_of: "t51_…" names task 51.
var conditionTask = regexp.MustCompile(`^t(\d+)_`)

// UnmarshalJSON reads our rows and the reference's: its task is an integer (or null, when
// the condition names the task), ours a string.
func (r *Row) UnmarshalJSON(b []byte) error {
	type plain Row
	aux := struct {
		*plain
		Task json.RawMessage `json:"task"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	task, err := taskText(aux.Task)
	if err != nil {
		return err
	}
	if task == "" {
		if m := conditionTask.FindStringSubmatch(r.Condition); m != nil {
			task = m[1]
		} else {
			task = r.Condition
		}
	}
	r.Task = task
	return nil
}

func taskText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("task: %w", err)
		}
		return s, nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", fmt.Errorf("task %s is neither a string nor an integer", raw)
	}
	return strconv.FormatInt(n, 10), nil
}

// taskNumbers gives each task the integer the reference's rows carry: a task id that is
// an integer (or a "t<N>_" condition) keeps it; any other id gets the next integer not
// yet used, in the order the tasks first appear.
type taskNumbers struct {
	ids  map[string]int
	used map[int]bool
	next int
}

func (tn *taskNumbers) of(task string) int {
	if n, ok := tn.ids[task]; ok {
		return n
	}
	if tn.ids == nil {
		tn.ids, tn.used = map[string]int{}, map[int]bool{}
	}
	n, err := strconv.Atoi(task)
	if err != nil || n < 0 || tn.used[n] {
		for tn.used[tn.next] {
			tn.next++
		}
		n = tn.next
	}
	tn.ids[task], tn.used[n] = n, true
	return n
}

// writeReferenceRow writes one row in the reference's shape.
func writeReferenceRow(w *bufio.Writer, r *Row, task int) error {
	b := make([]byte, 0, 64+12*len(r.InputIDs)+320)
	b = append(b, `{"input_ids":`...)
	b = appendInts(b, r.InputIDs)
	b = append(b, `,"labels":`...)
	b = appendInts(b, r.Labels)
	b = append(b, `,"n_tokens":`...)
	b = strconv.AppendInt(b, int64(r.NTokens), 10)
	b = append(b, `,"n_loss_tokens":`...)
	b = strconv.AppendInt(b, int64(r.NLossTokens), 10)
	b = append(b, `,"header_tokens":`...)
	b = strconv.AppendInt(b, int64(r.HeaderTokens), 10)
	b = append(b, `,"segment":`...)
	b = strconv.AppendInt(b, int64(r.Segment), 10)
	cond := r.Condition
	if cond == "" {
		cond = "t" + strconv.Itoa(task) + "_" + r.Task
	}
	for _, kv := range [...][2]string{{"episode", r.Episode}, {"condition", cond}, {"thread", r.Thread}} {
		b = append(b, `,"`...)
		b = append(b, kv[0]...)
		b = append(b, `":`...)
		b = chat.AppendPyString(b, kv[1])
	}
	b = append(b, `,"task":`...)
	b = strconv.AppendInt(b, int64(task), 10)
	b = append(b, `,"is_main":`...)
	b = strconv.AppendBool(b, r.IsMain)
	b = append(b, `,"role":`...)
	b = chat.AppendPyString(b, r.Role)
	b = append(b, `,"window":`...)
	b = strconv.AppendInt(b, int64(r.Window), 10)
	weight := 1.0
	if r.Weight != nil {
		weight = *r.Weight
	}
	b = append(b, `,"weight":`...)
	b = strconv.AppendFloat(b, weight, 'g', -1, 64)
	b = append(b, "}\n"...)
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write row: %w", err)
	}
	return nil
}

package sft

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mass-dev/mass/trainer/chat"
)

// IgnoreIndex is the label of a token that carries no loss (Hugging Face convention).
const IgnoreIndex = -100

// Role groups of a thread.
const (
	RoleOrchestrator = "orchestrator"
	RoleWorker       = "worker"
	RoleAuxiliary    = "auxiliary"
)

// Row is one training window, as stored in rows.jsonl (docs/formats.md).
// Labels[t] == InputIDs[t] where token t is supervised, IgnoreIndex elsewhere.
type Row struct {
	InputIDs    []int32 `json:"input_ids"`
	Labels      []int32 `json:"labels"`
	NTokens     int     `json:"n_tokens"`
	NLossTokens int     `json:"n_loss_tokens"`
	Task        string  `json:"task"`
	Episode     string  `json:"episode"`
	Thread      string  `json:"thread"`
	Role        string  `json:"role"`
	IsMain      bool    `json:"is_main"`
	Segment     int     `json:"segment"`
	Window      int     `json:"window"`
	ReferenceFields
}

// Validate checks the invariants a trainer relies on.
func (r *Row) Validate() error {
	if len(r.InputIDs) == 0 {
		return errors.New("row has no tokens")
	}
	if len(r.Labels) != len(r.InputIDs) {
		return fmt.Errorf("row has %d labels for %d tokens", len(r.Labels), len(r.InputIDs))
	}
	if r.NTokens != len(r.InputIDs) {
		return fmt.Errorf("n_tokens %d but %d input_ids", r.NTokens, len(r.InputIDs))
	}
	n := 0
	for i, l := range r.Labels {
		switch {
		case l == IgnoreIndex:
		case l == r.InputIDs[i]:
			n++
		default:
			return fmt.Errorf("label %d at %d is neither %d nor the token %d", l, i, IgnoreIndex, r.InputIDs[i])
		}
	}
	if n != r.NLossTokens {
		return fmt.Errorf("n_loss_tokens %d but %d supervised labels", r.NLossTokens, n)
	}
	return nil
}

// deriveCounts fills n_tokens and n_loss_tokens where the line had none.
func (r *Row) deriveCounts() {
	if r.NTokens == -1 {
		r.NTokens = len(r.InputIDs)
	}
	if r.NLossTokens == -1 {
		r.NLossTokens = 0
		for _, l := range r.Labels {
			if l != IgnoreIndex {
				r.NLossTokens++
			}
		}
	}
}

// RowReader streams rows from JSONL, validating each.
type RowReader struct {
	sc   *bufio.Scanner
	line int
}

// NewRowReader reads rows.jsonl from r. Lines may be as long as a window's JSON (tens of MB).
func NewRowReader(r io.Reader) *RowReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	return &RowReader{sc: sc}
}

// Next returns the next row, or io.EOF at the end.
func (rr *RowReader) Next() (Row, error) {
	for rr.sc.Scan() {
		rr.line++
		b := rr.sc.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		// -1 marks a count the line does not carry (plain Hugging Face rows
		// are {"input_ids", "labels"}): it is derived from the tokens.
		row := Row{NTokens: -1, NLossTokens: -1}
		if err := json.Unmarshal(b, &row); err != nil {
			return Row{}, fmt.Errorf("rows line %d: %w", rr.line, err)
		}
		row.deriveCounts()
		if err := row.Validate(); err != nil {
			return Row{}, fmt.Errorf("rows line %d: %w", rr.line, err)
		}
		return row, nil
	}
	if err := rr.sc.Err(); err != nil {
		return Row{}, fmt.Errorf("rows line %d: %w", rr.line+1, err)
	}
	return Row{}, io.EOF
}

// ReadRows reads every row of a rows.jsonl stream.
func ReadRows(r io.Reader) ([]Row, error) {
	return readAll(NewRowReader(r).Next)
}

// readAll collects rows from next until io.EOF.
func readAll(next func() (Row, error)) ([]Row, error) {
	var rows []Row
	for {
		row, err := next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// WriteRows writes rows as JSONL.
func WriteRows(w io.Writer, rows []Row) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	for i := range rows {
		if err := writeRow(bw, &rows[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// rowsWriter streams rows.jsonl in our format or the reference's.
type rowsWriter struct {
	w         *bufio.Writer
	reference bool
	tasks     taskNumbers
}

func newRowsWriter(w io.Writer, format string) *rowsWriter {
	return &rowsWriter{w: bufio.NewWriterSize(w, 1<<20), reference: format == FormatReference}
}

func (rw *rowsWriter) write(r *Row) error {
	if rw.reference {
		return writeReferenceRow(rw.w, r, rw.tasks.of(r.Task))
	}
	return writeRow(rw.w, r)
}

func (rw *rowsWriter) flush() error {
	if err := rw.w.Flush(); err != nil {
		return fmt.Errorf("write rows: %w", err)
	}
	return nil
}

// writeRow writes one JSONL line by hand: encoding/json is several times slower on the
// long integer arrays that dominate a dataset.
func writeRow(w *bufio.Writer, r *Row) error {
	b := make([]byte, 0, 64+12*len(r.InputIDs)+256)
	b = append(b, `{"input_ids":`...)
	b = appendInts(b, r.InputIDs)
	b = append(b, `,"labels":`...)
	b = appendInts(b, r.Labels)
	b = append(b, `,"n_tokens":`...)
	b = strconv.AppendInt(b, int64(r.NTokens), 10)
	b = append(b, `,"n_loss_tokens":`...)
	b = strconv.AppendInt(b, int64(r.NLossTokens), 10)
	for _, kv := range [...][2]string{{"task", r.Task}, {"episode", r.Episode}, {"thread", r.Thread}, {"role", r.Role}} {
		b = append(b, `,"`...)
		b = append(b, kv[0]...)
		b = append(b, `":`...)
		b = chat.AppendPyString(b, kv[1])
	}
	b = append(b, `,"is_main":`...)
	b = strconv.AppendBool(b, r.IsMain)
	b = append(b, `,"segment":`...)
	b = strconv.AppendInt(b, int64(r.Segment), 10)
	b = append(b, `,"window":`...)
	b = strconv.AppendInt(b, int64(r.Window), 10)
	b = append(b, "}\n"...)
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write row: %w", err)
	}
	return nil
}

func appendInts(b []byte, xs []int32) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

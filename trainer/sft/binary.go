package sft

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Binary window file (windows.bin), little-endian:
//
//	magic   8 bytes  "MASSWIN1"
//	then per window:
//	  metaLen uint32, meta  metaLen bytes: the row's JSON without input_ids and labels
//	  n       uint32, ids   n × int32
//	  mask    ceil(n/8) bytes, bit t%8 of byte t/8 set where labels[t] = ids[t]
//	                  (labels are -100 elsewhere)
//
// The file ends after the last window; a truncated window is an error.
const binaryMagic = "MASSWIN1"

// maxBinaryWindow bounds n and metaLen when reading, against corrupt files.
const maxBinaryWindow = 1 << 22

type rowMeta struct {
	NTokens     int    `json:"n_tokens"`
	NLossTokens int    `json:"n_loss_tokens"`
	Task        string `json:"task"`
	Episode     string `json:"episode"`
	Thread      string `json:"thread"`
	Role        string `json:"role"`
	IsMain      bool   `json:"is_main"`
	Segment     int    `json:"segment"`
	Window      int    `json:"window"`
}

// BinaryWriter writes windows.bin.
type BinaryWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewBinaryWriter writes the magic and returns a writer; call Flush at the end.
func NewBinaryWriter(w io.Writer) (*BinaryWriter, error) {
	bw := &BinaryWriter{w: bufio.NewWriterSize(w, 1<<20)}
	if _, err := bw.w.WriteString(binaryMagic); err != nil {
		return nil, fmt.Errorf("write windows.bin: %w", err)
	}
	return bw, nil
}

// Write appends one row.
func (bw *BinaryWriter) Write(r *Row) error {
	meta, err := json.Marshal(rowMeta{r.NTokens, r.NLossTokens, r.Task, r.Episode, r.Thread, r.Role, r.IsMain, r.Segment, r.Window})
	if err != nil {
		return fmt.Errorf("encode window meta: %w", err)
	}
	n := len(r.InputIDs)
	b := bw.buf[:0]
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = append(b, meta...)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for _, id := range r.InputIDs {
		b = binary.LittleEndian.AppendUint32(b, uint32(id))
	}
	mask := make([]byte, (n+7)/8)
	for t, l := range r.Labels {
		if l != IgnoreIndex {
			mask[t/8] |= 1 << (t % 8)
		}
	}
	b = append(b, mask...)
	bw.buf = b
	if _, err := bw.w.Write(b); err != nil {
		return fmt.Errorf("write windows.bin: %w", err)
	}
	return nil
}

// Flush writes buffered data.
func (bw *BinaryWriter) Flush() error { return bw.w.Flush() }

// BinaryReader streams rows from windows.bin.
type BinaryReader struct {
	r *bufio.Reader
	k int
}

// NewBinaryReader checks the magic.
func NewBinaryReader(r io.Reader) (*BinaryReader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	magic := make([]byte, len(binaryMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != binaryMagic {
		return nil, fmt.Errorf("windows.bin: bad magic (not a %s file)", binaryMagic)
	}
	return &BinaryReader{r: br}, nil
}

// Next returns the next row, or io.EOF after the last.
func (br *BinaryReader) Next() (Row, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(br.r, hdr[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return Row{}, io.EOF
		}
		return Row{}, br.errf("truncated header: %v", err)
	}
	metaLen := binary.LittleEndian.Uint32(hdr[:])
	if metaLen > maxBinaryWindow {
		return Row{}, br.errf("meta length %d too large", metaLen)
	}
	meta := make([]byte, metaLen)
	if _, err := io.ReadFull(br.r, meta); err != nil {
		return Row{}, br.errf("truncated meta: %v", err)
	}
	var m rowMeta
	if err := json.Unmarshal(meta, &m); err != nil {
		return Row{}, br.errf("meta: %v", err)
	}
	if _, err := io.ReadFull(br.r, hdr[:]); err != nil {
		return Row{}, br.errf("truncated length: %v", err)
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if n > maxBinaryWindow {
		return Row{}, br.errf("window of %d tokens too large", n)
	}
	body := make([]byte, 4*n+(n+7)/8)
	if _, err := io.ReadFull(br.r, body); err != nil {
		return Row{}, br.errf("truncated tokens: %v", err)
	}
	row := Row{InputIDs: make([]int32, n), Labels: make([]int32, n), NTokens: m.NTokens, NLossTokens: m.NLossTokens,
		Task: m.Task, Episode: m.Episode, Thread: m.Thread, Role: m.Role, IsMain: m.IsMain, Segment: m.Segment, Window: m.Window}
	mask := body[4*n:]
	for t := 0; t < n; t++ {
		row.InputIDs[t] = int32(binary.LittleEndian.Uint32(body[4*t:]))
		row.Labels[t] = IgnoreIndex
		if mask[t/8]&(1<<(t%8)) != 0 {
			row.Labels[t] = row.InputIDs[t]
		}
	}
	if err := row.Validate(); err != nil {
		return Row{}, br.errf("%v", err)
	}
	br.k++
	return row, nil
}

func (br *BinaryReader) errf(format string, a ...any) error {
	return fmt.Errorf("windows.bin window %d: %s", br.k, fmt.Sprintf(format, a...))
}

// ReadBinary reads every row of windows.bin.
func ReadBinary(r io.Reader) ([]Row, error) {
	br, err := NewBinaryReader(r)
	if err != nil {
		return nil, err
	}
	return readAll(br.Next)
}

package helper

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/mass-dev/mass/sandbox"
)

// Server executes requests against a filesystem. Root is the directory that
// relative paths resolve against (sandbox.WorkspaceMount inside a container).
type Server struct {
	Root string
}

// NewServer returns a server rooted at root.
func NewServer(root string) *Server { return &Server{Root: root} }

// opError carries a response kind.
type opError struct {
	kind string
	msg  string
}

func (e *opError) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return &opError{kind: KindInvalid, msg: fmt.Sprintf(format, args...)}
}

func tooLargef(format string, args ...any) error {
	return &opError{kind: KindTooLarge, msg: fmt.Sprintf(format, args...)}
}

// Do executes one request; it never panics on bad input.
func (s *Server) Do(req Request) Response {
	var resp Response
	var err error
	switch req.Op {
	case OpRead:
		var r sandbox.ReadResult
		r, err = s.read(req)
		resp.Read = &r
	case OpWrite:
		var c sandbox.FileChange
		c, err = s.write(req)
		resp.Change = &c
	case OpEdit:
		var c sandbox.FileChange
		c, err = s.edit(req)
		resp.Change = &c
	case OpList:
		resp.Entries, resp.Truncated, err = s.list(req)
	case OpGlob:
		resp.Paths, resp.Truncated, err = s.glob(req)
	case OpGrep:
		resp.Matches, resp.Truncated, err = s.grep(req)
	case OpStat:
		var fi sandbox.FileInfo
		fi, err = s.stat(req)
		resp.Info = &fi
	case OpManifest:
		resp.Entries, resp.Truncated, err = s.manifest()
	default:
		err = invalidf("unknown op %q", req.Op)
	}
	if err != nil {
		return errResponse(err)
	}
	resp.OK = true
	return resp
}

func errResponse(err error) Response {
	kind := KindOther
	var oe *opError
	switch {
	case errors.As(err, &oe):
		kind = oe.kind
	case errors.Is(err, fs.ErrNotExist):
		kind = KindNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		kind = KindDenied
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EFBIG):
		kind = KindTooLarge
	case errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENAMETOOLONG):
		kind = KindInvalid
	}
	return Response{Kind: kind, Error: err.Error()}
}

// resolve turns a request path into a clean absolute path.
func (s *Server) resolve(p string) (string, error) {
	if p == "" {
		return "", invalidf("missing path")
	}
	if len(p) > MaxPathLen {
		return "", invalidf("path longer than %d bytes", MaxPathLen)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", invalidf("path contains NUL")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.Root, p)
	}
	return filepath.Clean(p), nil
}

func (s *Server) resolveOr(p, def string) (string, error) {
	if p == "" {
		p = def
	}
	return s.resolve(p)
}

// openRegular opens p for reading without blocking on a FIFO or device and
// refuses anything but a regular file.
func openRegular(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, invalidf("%s is not a regular file", p)
	}
	return f, nil
}

// hashFile returns the hex sha256 of a regular file, "" when it does not
// exist. A file over MaxHashBytes (a huge sparse file, say) is not read to
// its end: its digest is UnhashedPrefix and its size, so time stays bounded.
func hashFile(p string) (string, int64, error) {
	f, err := openRegular(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", 0, nil
		}
		return "", 0, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxHashBytes {
		return unhashed(fi.Size()), fi.Size(), nil
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxHashBytes+1))
	if err != nil {
		return "", 0, err
	}
	if n > MaxHashBytes {
		return unhashed(n), n, nil
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func unhashed(size int64) string { return UnhashedPrefix + strconv.FormatInt(size, 10) }

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (s *Server) read(req Request) (sandbox.ReadResult, error) {
	p, err := s.resolve(req.Path)
	if err != nil {
		return sandbox.ReadResult{}, err
	}
	if req.Offset < 0 || req.Limit < 0 {
		return sandbox.ReadResult{}, invalidf("offset and limit must be >= 0")
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultReadLines
	}
	f, err := openRegular(p)
	if err != nil {
		return sandbox.ReadResult{}, err
	}
	defer f.Close()
	h := sha256.New()
	// The scan is bounded: a huge (or sparse) file yields a truncated result,
	// not a walk to its end.
	scan := &io.LimitedReader{R: f, N: MaxScanBytes}
	br := bufio.NewReaderSize(io.TeeReader(scan, h), 64<<10)
	var out strings.Builder
	res := sandbox.ReadResult{Path: p}
	var buf []byte
	line, full := 0, false
	for {
		var err error
		buf, err = readLine(br, buf)
		if err != nil && err != io.EOF {
			return sandbox.ReadResult{}, err
		}
		if len(buf) == 0 && err == io.EOF {
			break
		}
		switch {
		case line < req.Offset:
		case line >= req.Offset+limit:
			res.Truncated = true
		default:
			if bytes.IndexByte(buf, 0) >= 0 {
				return sandbox.ReadResult{}, invalidf("%s looks binary (NUL byte); inspect it with a shell command", p)
			}
			text := string(buf)
			if len(text) > MaxLineChars {
				text = text[:MaxLineChars] + "…[line truncated]\n"
				res.Truncated = true
			}
			if full || out.Len()+len(text) > MaxReadBytes {
				full, res.Truncated = true, true
			} else {
				out.WriteString(text)
			}
		}
		line++
		if err == io.EOF {
			break
		}
	}
	res.Content = out.String()
	res.TotalLines = line
	res.SHA256 = hex.EncodeToString(h.Sum(nil))
	if scan.N == 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() > MaxScanBytes {
			// TotalLines counts only the scanned prefix.
			res.Truncated = true
			res.SHA256 = unhashed(fi.Size())
		}
	}
	return res, nil
}

// readLine reads one line into buf[:0], keeping no more of a long line
// than the pieces read until it passed MaxLineChars; err is the reader's
// (io.EOF after a last line without a newline).
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		b, err := br.ReadSlice('\n')
		if len(buf) <= MaxLineChars {
			buf = append(buf, b...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

func (s *Server) write(req Request) (sandbox.FileChange, error) {
	p, err := s.resolve(req.Path)
	if err != nil {
		return sandbox.FileChange{}, err
	}
	if len(req.Content) > MaxWriteBytes {
		return sandbox.FileChange{}, tooLargef("content of %d bytes exceeds %d", len(req.Content), MaxWriteBytes)
	}
	before, _, err := hashFile(p)
	if err != nil {
		return sandbox.FileChange{}, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return sandbox.FileChange{}, err
	}
	if err := writeFile(p, req.Content); err != nil {
		return sandbox.FileChange{}, err
	}
	return sandbox.FileChange{Path: p, Created: before == "", Bytes: int64(len(req.Content)),
		SHA256Before: before, SHA256After: sum(req.Content)}, nil
}

func writeFile(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *Server) edit(req Request) (sandbox.FileChange, error) {
	p, err := s.resolve(req.Path)
	if err != nil {
		return sandbox.FileChange{}, err
	}
	if req.Old == req.New && req.Old != "" {
		return sandbox.FileChange{}, invalidf("old and new strings are identical")
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) && req.Old == "" {
		// An empty old string creates a new file, as qwen-code's edit tool does.
		return s.write(Request{Path: req.Path, Content: []byte(req.New)})
	}
	if err != nil {
		return sandbox.FileChange{}, err
	}
	if !fi.Mode().IsRegular() {
		return sandbox.FileChange{}, invalidf("%s is not a regular file", p)
	}
	if fi.Size() > MaxEditFileBytes {
		return sandbox.FileChange{}, tooLargef("%s has %d bytes; edit handles at most %d", p, fi.Size(), MaxEditFileBytes)
	}
	if req.Old == "" {
		return sandbox.FileChange{}, invalidf("%s exists; old string must not be empty", p)
	}
	f, err := openRegular(p)
	if err != nil {
		return sandbox.FileChange{}, err
	}
	old, err := io.ReadAll(io.LimitReader(f, MaxEditFileBytes+1))
	f.Close()
	if err != nil {
		return sandbox.FileChange{}, err
	}
	n := strings.Count(string(old), req.Old)
	switch {
	case n == 0:
		return sandbox.FileChange{}, &opError{kind: KindNotFound, msg: fmt.Sprintf("old string not found in %s", p)}
	case n > 1 && !req.ReplaceAll:
		return sandbox.FileChange{}, invalidf("old string occurs %d times in %s; add context or set replace_all", n, p)
	}
	var out string
	if req.ReplaceAll {
		out = strings.ReplaceAll(string(old), req.Old, req.New)
	} else {
		out = strings.Replace(string(old), req.Old, req.New, 1)
		n = 1
	}
	if len(out) > MaxWriteBytes {
		return sandbox.FileChange{}, tooLargef("edited file would have %d bytes", len(out))
	}
	if err := writeFile(p, []byte(out)); err != nil {
		return sandbox.FileChange{}, err
	}
	return sandbox.FileChange{Path: p, Bytes: int64(len(out)), SHA256Before: sum(old),
		SHA256After: sum([]byte(out)), Replacements: n}, nil
}

package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"sort"
	"time"
)

// epoch is the modification time of every generated entry, so the same
// inputs always give the same tar bytes and the same hash.
var epoch = time.Unix(0, 0).UTC()

// entry is one member of a generated root filesystem.
type entry struct {
	name     string // path without leading slash
	typ      byte   // tar.TypeReg, tar.TypeDir, tar.TypeSymlink
	mode     int64
	uid, gid int
	body     []byte
	link     string
}

// fsBuilder collects entries and writes them as a deterministic tar.
type fsBuilder struct {
	entries map[string]entry
}

func newFS() *fsBuilder { return &fsBuilder{entries: map[string]entry{}} }

func (b *fsBuilder) dir(name string, mode int64, uid, gid int) {
	b.entries[name] = entry{name: name, typ: tar.TypeDir, mode: mode, uid: uid, gid: gid}
}

func (b *fsBuilder) file(name string, mode int64, body []byte) {
	b.entries[name] = entry{name: name, typ: tar.TypeReg, mode: mode, body: body}
}

func (b *fsBuilder) symlink(name, target string) {
	b.entries[name] = entry{name: name, typ: tar.TypeSymlink, mode: 0o777, link: target}
}

// tar renders the entries sorted by name; parents sort before children.
func (b *fsBuilder) tar() ([]byte, error) {
	names := make([]string, 0, len(b.entries))
	for n := range b.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		e := b.entries[n]
		h := &tar.Header{
			Name:     e.name,
			Typeflag: e.typ,
			Mode:     e.mode,
			Uid:      e.uid,
			Gid:      e.gid,
			ModTime:  epoch,
			Linkname: e.link,
			Format:   tar.FormatPAX,
		}
		if e.typ == tar.TypeDir {
			h.Name += "/"
		}
		if e.typ == tar.TypeReg {
			h.Size = int64(len(e.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write tar header %s: %w", n, err)
		}
		if e.typ == tar.TypeReg {
			if _, err := tw.Write(e.body); err != nil {
				return nil, fmt.Errorf("write tar body %s: %w", n, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close tar: %w", err)
	}
	return buf.Bytes(), nil
}

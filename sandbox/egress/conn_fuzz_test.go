package egress

import (
	"encoding/json"
	"net"
	"testing"
	"unicode/utf8"
)

// FuzzOrphanRecord: the record of bytes no request claimed is named from
// whatever the agent sent and the server answered; it stays a valid,
// bounded record.
func FuzzOrphanRecord(f *testing.F) {
	f.Add([]byte("GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n"), []byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	f.Add([]byte("CONNECT a.example:443 HTTP/1.1\r\n"), []byte(""))
	f.Add([]byte("\xff\xfe / x\r\nhost:\xff\r\n"), []byte("HTTP/1.1 x"))
	f.Fuzz(func(t *testing.T, head, reply []byte) {
		p := testProxy(t)
		c := &meterConn{Conn: fakeConn{}, p: p, head: head, reply: reply, out: int64(len(head)), in: int64(len(reply))}
		rec := c.orphan()
		if len(rec.Domain) > 253 || len(rec.Method) > 32 || len(rec.Reason) > 200 || !utf8.ValidString(rec.Domain+rec.Method+rec.Reason) {
			t.Fatalf("record %+v", rec)
		}
		if _, err := json.Marshal(rec); err != nil {
			t.Fatal(err)
		}
	})
}

// fakeConn is a net.Conn with a remote address and nothing else.
type fakeConn struct{ net.Conn }

func (fakeConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 4000} }

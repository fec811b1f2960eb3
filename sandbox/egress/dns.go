package egress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// DNS response codes the proxy sends.
const (
	rcodeOK       = 0
	rcodeFormErr  = 1
	rcodeNXDomain = 3
	rcodeNotImp   = 4
	rcodeRefused  = 5
)

const (
	typeA    = 1
	typeAAAA = 28
)

// question is the one question of a DNS query.
type question struct {
	name  string // lower case, no trailing dot; a label's own '.' or '\\' escaped as in zone files
	qtype uint16
	end   int  // offset just past the question
	odd   bool // a label holds a '.' or a byte outside printable ASCII
}

var errDNS = errors.New("malformed DNS query")

// parseQuery reads the header and the single question of q. Compression
// pointers, several questions and responses are refused.
func parseQuery(q []byte) (question, error) {
	if len(q) < 12 || q[2]&0x80 != 0 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return question{}, errDNS
	}
	var labels []string
	oddName := false
	i := 12
	for {
		if i >= len(q) {
			return question{}, errDNS
		}
		n := int(q[i])
		i++
		if n == 0 {
			break
		}
		if n > 63 || i+n > len(q) {
			return question{}, errDNS
		}
		l, odd := escapeLabel(q[i : i+n])
		labels = append(labels, l)
		oddName = oddName || odd
		i += n
	}
	if i+4 > len(q) {
		return question{}, errDNS
	}
	name := strings.ToLower(strings.Join(labels, "."))
	if len(name) > 253 {
		return question{}, errDNS
	}
	return question{name: name, qtype: binary.BigEndian.Uint16(q[i : i+2]), end: i + 4, odd: oddName}, nil
}

// escapeLabel writes a wire label as a zone file does: a '.' or '\\'
// inside it escaped by '\\', other bytes outside printable ASCII as
// \DDD; odd is true when anything needed escaping. The record then shows
// the name as asked, and "data.test" + "example" never reads as the
// three labels of data.test.example.
func escapeLabel(b []byte) (string, bool) {
	var sb strings.Builder
	odd := false
	for _, c := range b {
		switch {
		case c == '.' || c == '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
			odd = true
		case c < 0x21 || c > 0x7e:
			fmt.Fprintf(&sb, "\\%03d", c)
			odd = true
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), odd
}

// Answer builds the reply to one query from client; self is the proxy's
// own address on the client's network, the answer for an allowed name's A
// question. Denied names get NXDOMAIN and are never looked up anywhere.
// The record is nil for a query too short to answer and once the
// recorder is full (every query is then refused).
func (p *Proxy) Answer(q []byte, client, self netip.Addr) ([]byte, *Record) {
	rec := &Record{Time: time.Now().UTC(), Client: client.String(), Kind: KindDNS, Port: DNSPort}
	qs, err := parseQuery(q)
	if err == nil && p.cfg.Recorder.Full() {
		return reply(q[:qs.end], q, rcodeRefused, netip.Addr{}), nil
	}
	if err != nil {
		if len(q) < 12 {
			return nil, nil
		}
		rec.Status, rec.Reason = rcodeFormErr, err.Error()
		return reply(q[:12], nil, rcodeFormErr, netip.Addr{}), rec
	}
	rec.Domain, rec.Method = qs.name, qtypeName(qs.qtype)
	opcode := (q[2] >> 3) & 0xf
	switch {
	case opcode != 0:
		rec.Status, rec.Reason = rcodeNotImp, "only standard queries"
	case qs.odd:
		rec.Status, rec.Reason = rcodeRefused, "a label holds a literal '.' or a byte outside printable ASCII"
	case !p.allow.Allows(qs.name):
		rec.Status, rec.Reason = rcodeNXDomain, qs.name+" is not on this task's allowlist"
	default:
		rec.Allowed, rec.Status = true, rcodeOK
	}
	var ans netip.Addr
	if rec.Allowed && qs.qtype == typeA && self.Is4() {
		ans = self
	}
	return reply(q[:qs.end], q, rec.Status, ans), rec
}

// reply copies the header and question of q (head) and adds one A record
// when ans is valid.
func reply(head, q []byte, rcode int, ans netip.Addr) []byte {
	out := append([]byte(nil), head...)
	flags := uint16(0x8000) | uint16(rcode)
	if q != nil {
		flags |= uint16(q[2]&0x79) << 8 // opcode and RD
	}
	binary.BigEndian.PutUint16(out[2:4], flags)
	qd := uint16(0)
	if len(head) > 12 {
		qd = 1
	}
	binary.BigEndian.PutUint16(out[4:6], qd)
	binary.BigEndian.PutUint16(out[6:8], 0)
	binary.BigEndian.PutUint16(out[8:10], 0)
	binary.BigEndian.PutUint16(out[10:12], 0)
	if ans.IsValid() {
		binary.BigEndian.PutUint16(out[6:8], 1)
		a := ans.As4()
		out = append(out, 0xc0, 12, 0, typeA, 0, 1, 0, 0, 0, 60, 0, 4)
		out = append(out, a[:]...)
	}
	return out
}

func qtypeName(t uint16) string {
	switch t {
	case typeA:
		return "A"
	case typeAAAA:
		return "AAAA"
	case 5:
		return "CNAME"
	case 15:
		return "MX"
	case 16:
		return "TXT"
	case 255:
		return "ANY"
	}
	return "TYPE" + strconv.Itoa(int(t))
}

// ServeDNS answers UDP queries on pc until it is closed.
func (p *Proxy) ServeDNS(pc net.PacketConn) error {
	buf := make([]byte, 1500)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return err
		}
		client := addrOf(addr)
		out, rec := p.Answer(buf[:n], client, SelfFor(client))
		if rec != nil {
			p.cfg.Recorder.Add(*rec)
		}
		if out != nil {
			_, _ = pc.WriteTo(out, addr)
		}
	}
}

// ServeDNSTCP answers TCP queries (two-byte length prefix) on l until it is
// closed; one query per connection read within 10 s.
func (p *Proxy) ServeDNSTCP(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go p.dnsConn(c)
	}
}

func (p *Proxy) dnsConn(c net.Conn) {
	defer c.Close()
	for {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		client := addrOf(c.RemoteAddr())
		out, rec := p.Answer(q, client, SelfFor(client))
		if rec != nil {
			p.cfg.Recorder.Add(*rec)
		}
		if out == nil {
			return
		}
		binary.BigEndian.PutUint16(l[:], uint16(len(out)))
		if _, err := c.Write(append(l[:], out...)); err != nil {
			return
		}
	}
}

func addrOf(a net.Addr) netip.Addr {
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// SelfFor is this host's address on the network of client: the one an
// allowed name resolves to, so that a client that ignores HTTP_PROXY still
// reaches only the proxy.
func SelfFor(client netip.Addr) netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Addr{}
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || !n.Contains(client.AsSlice()) {
			continue
		}
		if ip, ok := netip.AddrFromSlice(n.IP); ok {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}

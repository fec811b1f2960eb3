package egress

import (
	"encoding/binary"
	"io"
	"net/netip"
	"strings"
	"testing"
)

func query(name string, qtype uint16) []byte {
	q := []byte{0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range strings.Split(name, ".") {
		q = append(q, byte(len(l)))
		q = append(q, l...)
	}
	q = append(q, 0, byte(qtype>>8), byte(qtype), 0, 1)
	return q
}

func testProxy(t testing.TB) *Proxy {
	p, err := New(Config{Allow: []string{"data.example.org", "*.rcsb.org"}, Recorder: NewRecorder(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnswer(t *testing.T) {
	p := testProxy(t)
	self := netip.MustParseAddr("172.30.0.2")
	client := netip.MustParseAddr("172.30.0.3")
	tests := []struct {
		name    string
		qtype   uint16
		rcode   int
		answers int
		allowed bool
	}{
		{"data.example.org", typeA, rcodeOK, 1, true},
		{"DATA.Example.org", typeA, rcodeOK, 1, true},
		{"files.rcsb.org", typeAAAA, rcodeOK, 0, true},
		{"files.rcsb.org", 16, rcodeOK, 0, true},
		{"secret-4f2a.attacker.example", typeA, rcodeNXDomain, 0, false},
		{"example.org", typeA, rcodeNXDomain, 0, false},
		{"10.0.0.1", typeA, rcodeNXDomain, 0, false},
	}
	for _, tt := range tests {
		out, rec := p.Answer(query(tt.name, tt.qtype), client, self)
		if rec == nil || len(out) < 12 {
			t.Fatalf("%s: no answer", tt.name)
		}
		if got := int(out[3] & 0xf); got != tt.rcode {
			t.Errorf("%s: rcode %d, want %d", tt.name, got, tt.rcode)
		}
		if got := int(binary.BigEndian.Uint16(out[6:8])); got != tt.answers {
			t.Errorf("%s: %d answers, want %d", tt.name, got, tt.answers)
		}
		if tt.answers == 1 && netip.AddrFrom4([4]byte(out[len(out)-4:])) != self {
			t.Errorf("%s: answer %v, want %v", tt.name, out[len(out)-4:], self)
		}
		if out[0] != 0xab || out[1] != 0xcd || out[2]&0x80 == 0 {
			t.Errorf("%s: reply header %x", tt.name, out[:4])
		}
		if rec.Allowed != tt.allowed || rec.Kind != KindDNS || rec.Client != client.String() || rec.Domain != strings.ToLower(tt.name) {
			t.Errorf("%s: record %+v", tt.name, rec)
		}
	}
	if out, rec := p.Answer([]byte{1, 2, 3}, client, self); out != nil || rec != nil {
		t.Errorf("short query answered: %x %+v", out, rec)
	}
	bad := query("data.example.org", typeA)
	bad[12] = 0xc0 // a compression pointer in the question
	if out, rec := p.Answer(bad, client, self); rec == nil || rec.Allowed || out[3]&0xf != rcodeFormErr {
		t.Errorf("pointer in question: %x %+v, want FORMERR", out, rec)
	}
}

// FuzzAnswer: any packet gets no reply or a well-formed one with the
// query's id, and only an allowed name ever gets an address.
func FuzzAnswer(f *testing.F) {
	f.Add(query("data.example.org", typeA))
	f.Add(query("x.attacker.example", typeA))
	f.Add([]byte{0, 0, 0x80, 0, 0, 1})
	f.Add(append(query("a.rcsb.org", typeA), 0xff, 0xff))
	p := testProxy(f)
	self, client := netip.MustParseAddr("10.1.0.2"), netip.MustParseAddr("10.1.0.3")
	f.Fuzz(func(t *testing.T, q []byte) {
		out, rec := p.Answer(q, client, self)
		if out == nil {
			return
		}
		if len(out) < 12 || out[0] != q[0] || out[1] != q[1] || out[2]&0x80 == 0 || rec == nil {
			t.Fatalf("reply %x to %x", out, q)
		}
		if binary.BigEndian.Uint16(out[6:8]) > 0 && (!rec.Allowed || !p.allow.Allows(rec.Domain)) {
			t.Fatalf("address for %q (record %+v)", rec.Domain, rec)
		}
	})
}

func TestParseRecordsSkipsLogLines(t *testing.T) {
	in := "time=x level=INFO msg=ready\n" + `{"ts":"2026-01-01T00:00:00Z","client":"1.2.3.4","kind":"dns","domain":"a.org","status":3,"allowed":false,"bytes_out":0,"bytes_in":0}` + "\n{bad\n"
	rs, err := ParseRecords(strings.NewReader(in))
	if len(rs) != 1 || rs[0].Domain != "a.org" || err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("ParseRecords = %+v, %v; want one record and an error on line 3", rs, err)
	}
}

// TestRecordCapFailsClosed: once the record cap is reached the proxy
// refuses everything, so no request goes unrecorded.
func TestRecordCapFailsClosed(t *testing.T) {
	var buf strings.Builder
	rec := NewRecorder(&buf)
	rec.max = 2
	p, err := New(Config{Allow: []string{"data.example.org"}, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	self, client := netip.MustParseAddr("10.1.0.2"), netip.MustParseAddr("10.1.0.3")
	for i := 0; i < 3; i++ {
		out, r := p.Answer(query("data.example.org", typeA), client, self)
		if r != nil {
			rec.Add(*r)
		}
		rcode := int(out[3] & 0xf)
		if i < 2 && rcode != rcodeOK || i == 2 && (rcode != rcodeRefused || r != nil) {
			t.Errorf("query %d: rcode %d record %v", i, rcode, r)
		}
	}
	rs, _ := ParseRecords(strings.NewReader(buf.String()))
	if len(rs) != 2 || !strings.Contains(rs[1].Reason, "record cap") {
		t.Errorf("records %+v: want 2, the last saying the cap was reached", rs)
	}
	if why := p.admit("data.example.org", 80, 80); why != "record cap reached" {
		t.Errorf("admit after the cap = %q", why)
	}
}

// FuzzParseRecords: egress.jsonl holds names an agent chose; any content
// parses or fails with an error, and what parses survives a round trip.
func FuzzParseRecords(f *testing.F) {
	f.Add([]byte(`{"ts":"2026-01-01T00:00:00Z","client":"1.2.3.4","kind":"dns","domain":"a.org","status":3,"allowed":false,"bytes_out":0,"bytes_in":0}` + "\n"))
	f.Add([]byte("log line\n{\"domain\":\"\\u0000\\n\"}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := ParseRecords(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		var buf strings.Builder
		rec := NewRecorder(&buf)
		for _, r := range rs {
			rec.Add(r)
		}
		again, err := ParseRecords(strings.NewReader(buf.String()))
		if err != nil || len(again) != len(rs) {
			t.Fatalf("round trip: %d records, then %d (%v)", len(rs), len(again), err)
		}
	})
}

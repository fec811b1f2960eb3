package ledger

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

func ledgerSeeds(f *testing.F) {
	b, err := os.ReadFile(writeLedger(f, 3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(bytes.Replace(b, []byte(`"ok":true`), []byte(`"ok":false`), 1))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"seq":1}` + "\n"))
	f.Add([]byte(`{"seq":"1","detail":[1,2,{"a":null}]}` + "\n"))
	f.Add([]byte(`[1,2]` + "\n" + `{"hash":1}`))
}

// FuzzVerify feeds arbitrary bytes to Verify and Read: no panic, a
// *LineError for every content defect, and agreement between the two.
func FuzzVerify(f *testing.F) {
	ledgerSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := Verify(bytes.NewReader(data), testEpisode)
		var le *LineError
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("Verify error %v is not a *LineError", err)
		}
		if le != nil && le.Line != n+1 {
			t.Errorf("bad line %d after %d valid records", le.Line, n)
		}
		recs, rerr := Read(bytes.NewReader(data))
		if err == nil {
			if rerr != nil {
				t.Fatalf("Verify ok but Read: %v", rerr)
			}
			if len(recs) != n {
				t.Fatalf("Read %d records, Verify %d", len(recs), n)
			}
		}
	})
}

// FuzzCanonical checks the canonical form is stable: canonicalizing twice
// changes nothing, and hashing never panics.
func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":"x","hash":"h"}`))
	f.Add([]byte(`{"a":{"z":[1,2.50,-3e10],"y":"\u2028<&>"}}`))
	f.Add([]byte(`{"a":"\xff"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c1, err := Canonical(data)
		if err != nil {
			return
		}
		c2, err := Canonical(c1)
		if err != nil {
			t.Fatalf("canonical form %q does not parse: %v", c1, err)
		}
		if !bytes.Equal(c1, c2) {
			t.Fatalf("canonical not idempotent:\n%q\n%q", c1, c2)
		}
		_ = ChainHash("p", c1)
	})
}

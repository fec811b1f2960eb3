package audit

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/agents/ledger"
)

// FuzzParseRequests: api_requests.jsonl is untrusted; no panic, and a
// parsed file re-parses to the same count.
func FuzzParseRequests(f *testing.F) {
	f.Add([]byte(`{"seq":1,"agent":"a","role":"worker","status":"ok","response":{"usage":{"prompt_tokens":3}}}` + "\n"))
	f.Add([]byte("{}\n{\"seq\":"))
	f.Add([]byte("\n"))
	f.Add([]byte(`{"response":{"usage":{"prompt_tokens":"x"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := ParseRequests(data)
		if err != nil {
			return
		}
		if len(reqs) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d requests from %d lines", len(reqs), bytes.Count(data, []byte("\n"))+1)
		}
	})
}

// FuzzParseManifest: manifests are written from inside a sandbox's view
// of the workspace; no panic, every key is a clean absolute path.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`[{"path":"a.py","type":"file","size":1,"mode":420,"sha256":"ab"}]`))
	f.Add([]byte(`[{"path":"/workspace/../etc/x","type":"file"},{"path":"d","type":"dir"}]`))
	f.Add([]byte(`[{"path":""}]`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		for p := range m {
			if p != CleanPath(p) || p == "" || p[0] != '/' {
				t.Fatalf("manifest key %q is not clean", p)
			}
		}
	})
}

// FuzzCompute runs the audit and the HTML page over arbitrary ledger
// records (chain not required) and requests: no panic, counters agree with
// their evidence lists.
func FuzzCompute(f *testing.F) {
	dir := teamEpisode(f)
	led, err := os.ReadFile(filepath.Join(dir, LedgerFile))
	if err != nil {
		f.Fatal(err)
	}
	reqs, err := os.ReadFile(filepath.Join(dir, RequestsFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(led, reqs)
	f.Add([]byte(`{"agent":"w","tool":"agent_finish","detail":{"changed":["a","a","../b"]}}`+"\n"), []byte(""))
	f.Add([]byte(`{"agent":"w","tool":"agent_start","detail":{"role":"worker","parent":"w"}}`+"\n"), []byte(`{"agent":"w"}`))
	f.Fuzz(func(t *testing.T, ledgerData, reqData []byte) {
		recs, err := ledger.Read(bytes.NewReader(ledgerData))
		if err != nil {
			return
		}
		rq, err := ParseRequests(reqData)
		if err != nil {
			return
		}
		r := Compute(Inputs{Episode: "ep", Records: recs, Requests: rq, ProtectedPaths: []string{"eval"},
			Manifests: map[string]map[string]string{}})
		if r.Delegation != len(r.Delegations) || r.CodeHandoff != len(r.Handoffs) ||
			r.WorkerRevision+r.OrchestratorRevision != len(r.Revisions) {
			t.Fatalf("counters disagree with evidence: %+v", r)
		}
		if err := WriteHTML(io.Discard, r); err != nil {
			t.Fatal(err)
		}
	})
}

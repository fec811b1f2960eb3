package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/agents/ledger"
	"github.com/mass-dev/mass/episodefmt"
	"github.com/mass-dev/mass/sandbox/egress"
)

// Episode file names read by the audit: those of package episodefmt.
const (
	LedgerFile   = episodefmt.LedgerFile
	RequestsFile = episodefmt.RequestsFile
	EpisodeFile  = episodefmt.EpisodeFile
	StatusFile   = episodefmt.StatusFile
	ManifestsDir = episodefmt.ManifestsDir
)

// Size caps for what the audit reads.
const (
	MaxLogBytes      = 1 << 30  // ledger.jsonl, api_requests.jsonl
	MaxManifestBytes = 64 << 20 // manifests/<agent>.json, episode.json
)

// Source gives the audit an episode's files by name ("ledger.jsonl",
// "manifests/worker-1.json"). A missing file is an error wrapping
// fs.ErrNotExist.
type Source interface {
	ReadFile(ctx context.Context, name string, max int64) ([]byte, error)
}

// DirSource reads an episode directory on the local disk
// (<data-dir>/episodes/<id>). It never follows a symbolic link in the last
// path element.
type DirSource struct{ Dir string }

var _ Source = DirSource{}

// ReadFile reads name under the directory, refusing names that leave it and
// files larger than max.
func (d DirSource) ReadFile(_ context.Context, name string, max int64) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("read episode file %q: invalid name", name)
	}
	p := filepath.Join(d.Dir, filepath.FromSlash(name))
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, fmt.Errorf("read %s: %w", p, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: larger than %d bytes", p, max)
	}
	return b, nil
}

// Inputs is everything Compute looks at.
type Inputs struct {
	Episode        string
	Records        []ledger.Record // verified prefix of the ledger
	Ledger         LedgerStatus
	Requests       []Request
	Manifests      map[string]map[string]string // agent -> cleaned path -> sha256
	ProtectedPaths []string
	HiddenPaths    []string        // episode.json's hidden_paths
	Grade          *grade.Grade    // run_status.json's grade
	Guards         *guard.Report   // guards.json; nil when absent
	Model          string          // episode.json's model
	DryRun         bool            // the model was massd's scripted dry-run policy
	SandboxRuntime string          // episode.json's sandbox_runtime
	SandboxImage   string          // episode.json's sandbox_image ("" : the runtime's default)
	Egress         []egress.Record // egress.jsonl; nil when the task had no network
}

// Request is the part of an api_requests.jsonl record the audit uses.
type Request struct {
	Seq      int64  `json:"seq"`
	Agent    string `json:"agent"`
	Thread   string `json:"thread"`
	Role     string `json:"role"`
	Parent   string `json:"parent"`
	Status   string `json:"status"`
	Purpose  string `json:"purpose"` // "chat_compression": a side query, not a turn
	Response struct {
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		} `json:"usage"`
	} `json:"response"`
}

// Load reads and verifies an episode's files from src. A missing
// api_requests.jsonl, episode.json or manifest leaves that part empty; a
// missing ledger is an error. A ledger that does not verify is not an
// error: its verified prefix is used and Inputs.Ledger tells.
func Load(ctx context.Context, src Source, episode string) (Inputs, error) {
	in := Inputs{Episode: episode, Manifests: map[string]map[string]string{}}
	var err error
	if in.Records, in.Ledger, err = loadLedger(ctx, src, episode); err != nil {
		return in, err
	}

	if rb, err := src.ReadFile(ctx, RequestsFile, MaxLogBytes); err == nil {
		if in.Requests, err = ParseRequests(rb); err != nil {
			return in, fmt.Errorf("load %s of %s: %w", RequestsFile, episode, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return in, fmt.Errorf("load %s of %s: %w", RequestsFile, episode, err)
	}

	if eb, err := src.ReadFile(ctx, EpisodeFile, MaxManifestBytes); err == nil {
		var info struct {
			ProtectedPaths []string `json:"protected_paths"`
			HiddenPaths    []string `json:"hidden_paths"`
			Model          string   `json:"model"`
			DryRun         bool     `json:"dry_run"`
			SandboxRuntime string   `json:"sandbox_runtime"`
			SandboxImage   string   `json:"sandbox_image"`
		}
		if err := json.Unmarshal(eb, &info); err != nil {
			return in, fmt.Errorf("load %s of %s: %w", EpisodeFile, episode, err)
		}
		in.ProtectedPaths, in.HiddenPaths, in.Model, in.DryRun = info.ProtectedPaths, info.HiddenPaths, info.Model, info.DryRun
		in.SandboxRuntime, in.SandboxImage = info.SandboxRuntime, info.SandboxImage
	} else if !errors.Is(err, fs.ErrNotExist) {
		return in, fmt.Errorf("load %s of %s: %w", EpisodeFile, episode, err)
	}

	if err := loadGuards(ctx, src, &in); err != nil {
		return in, fmt.Errorf("load guards of %s: %w", episode, err)
	}
	if err := loadEgress(ctx, src, &in); err != nil {
		return in, fmt.Errorf("load egress of %s: %w", episode, err)
	}
	for _, r := range in.Records {
		if r.Tool != ledger.ToolAgentFinish || in.Manifests[r.Agent] != nil || !safeAgentName(r.Agent) {
			continue
		}
		mb, err := src.ReadFile(ctx, ManifestsDir+"/"+r.Agent+".json", MaxManifestBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return in, fmt.Errorf("load manifest of %s: %w", r.Agent, err)
		}
		m, err := ParseManifest(mb)
		if err != nil {
			return in, fmt.Errorf("load manifest of %s: %w", r.Agent, err)
		}
		in.Manifests[r.Agent] = m
	}
	return in, nil
}

// safeAgentName keeps agent ids from the ledger from naming other files.
func safeAgentName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00") && len(s) <= 200
}

// verifiedPrefix returns the records that verify and the ledger's status.
func verifiedPrefix(b []byte, episode string) ([]ledger.Record, LedgerStatus) {
	n, verr := ledger.Verify(bytes.NewReader(b), episode)
	st := LedgerStatus{Records: n, Verified: verr == nil}
	if verr != nil {
		st.Error = verr.Error()
	}
	// The first n lines verified, so they parse.
	end := 0
	for range n {
		end += bytes.IndexByte(b[end:], '\n') + 1
	}
	recs, err := ledger.Read(bytes.NewReader(b[:end]))
	if err != nil || len(recs) != n {
		return nil, LedgerStatus{Error: fmt.Sprintf("re-read verified ledger: %v", err)}
	}
	// One rule for the empty chain, the writer's (ledger.Writer.Head): its
	// head is the genesis hash, which is what Recover and a normal finish
	// record for an episode stopped before its first record.
	st.Head = ledger.Genesis(episode)
	if n > 0 {
		st.Head = recs[n-1].Hash
	}
	return recs, st
}

// VerifyLedger checks an episode's ledger chain and, when run_status.json
// recorded it, the final head. The error is about reading the files; a
// ledger that does not verify is reported in the status.
func VerifyLedger(ctx context.Context, src Source, episode string) (LedgerStatus, error) {
	_, st, err := loadLedger(ctx, src, episode)
	return st, err
}

func loadLedger(ctx context.Context, src Source, episode string) ([]ledger.Record, LedgerStatus, error) {
	lb, err := src.ReadFile(ctx, LedgerFile, MaxLogBytes)
	if errors.Is(err, fs.ErrNotExist) {
		if none, serr := neverLedgered(ctx, src); serr == nil && none {
			return nil, LedgerStatus{Verified: true, Empty: true}, nil
		}
	}
	if err != nil {
		return nil, LedgerStatus{}, fmt.Errorf("load ledger of %s: %w", episode, err)
	}
	recs, st := verifiedPrefix(lb, episode)
	if err := checkHead(ctx, src, &st); err != nil {
		return nil, st, fmt.Errorf("load %s of %s: %w", StatusFile, episode, err)
	}
	return recs, st, nil
}

// neverLedgered reports an episode that ended before it created its ledger:
// its run_status.json exists, records no ledger head and says the episode
// failed on infrastructure (massd stopped under it). Its ledger verifies
// as empty; a missing ledger of any other episode is an error.
func neverLedgered(ctx context.Context, src Source) (bool, error) {
	b, err := src.ReadFile(ctx, StatusFile, MaxManifestBytes)
	if err != nil {
		return false, err
	}
	var rs struct {
		Failure string          `json:"failure"`
		Head    json.RawMessage `json:"ledger_head"`
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		return false, err
	}
	return rs.Failure == episodefmt.FailInfra && (len(rs.Head) == 0 || string(rs.Head) == "null"), nil
}

// checkHead compares the ledger with the head run_status.json recorded
// when the episode ended ("ledger_head":{"seq","hash"}), which is what
// catches records cut from the end. Without one, nothing is checked.
func checkHead(ctx context.Context, src Source, st *LedgerStatus) error {
	b, err := src.ReadFile(ctx, StatusFile, MaxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var rs struct {
		Head *struct {
			Seq  int64  `json:"seq"`
			Hash string `json:"hash"`
		} `json:"ledger_head"`
	}
	if err := json.Unmarshal(b, &rs); err != nil {
		return err
	}
	if rs.Head == nil || !st.Verified {
		return nil
	}
	st.HeadChecked = true
	if rs.Head.Seq != int64(st.Records) || rs.Head.Hash != st.Head {
		st.Verified = false
		st.Error = fmt.Sprintf("ledger ends at seq %d but run_status.json recorded head seq %d hash %.16s… (records cut from the end or ledger replaced)",
			st.Records, rs.Head.Seq, rs.Head.Hash)
	}
	return nil
}

// ParseRequests parses api_requests.jsonl. Every complete line must be a
// JSON object; a torn final line (no newline, not JSON) is ignored as a
// crash leftover.
func ParseRequests(b []byte) ([]Request, error) {
	var out []Request
	for n := 1; len(b) > 0; n++ {
		line, rest, terminated := bytes.Cut(b, []byte("\n"))
		b = rest
		var r Request
		if err := json.Unmarshal(line, &r); err != nil {
			if !terminated {
				break
			}
			return nil, fmt.Errorf("line %d: not a request record: %w", n, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseManifest parses a workspace manifest [{"path","type","size","mode",
// "sha256"}] into cleaned path -> sha256 (regular files only).
func ParseManifest(b []byte) (map[string]string, error) {
	var entries []struct {
		Path   string `json:"path"`
		Type   string `json:"type"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	m := make(map[string]string, len(entries))
	for i, e := range entries {
		if e.Path == "" {
			return nil, fmt.Errorf("parse manifest: entry %d has no path", i)
		}
		if e.Type != "" && e.Type != "file" {
			continue
		}
		m[CleanPath(e.Path)] = e.SHA256
	}
	return m, nil
}

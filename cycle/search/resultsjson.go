package search

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxResultsFileBytes is the most of one results/*.json file the appendix
// reads; a larger file is shown as a read error.
const MaxResultsFileBytes = 16 << 20

// Names the reference never appends: raw record dumps everywhere, and
// large prediction blobs of a few queries (keyed query{q}_ourTeam).
var (
	resultsExcludedGlobally = []string{"raw_records.json", "pilot_raw_records.json"}
	resultsExcludedByQuery  = map[string][]string{
		"query57_ourTeam": {"data_quality_issues.json"},
		"query202_ourTeam": {"curve_data.json", "distances_angles_predictions.json", "distances_only_predictions.json",
			"run_B0_family_s0.json", "run_B0_family_s1.json", "run_B0_family_s2.json", "run_B0_random_s0.json",
			"run_B1_family_s0.json", "run_B1_family_s1.json", "run_B1_family_s2.json", "run_B1_random_s0.json",
			"run_M1_family_s0.json", "run_M1_family_s1.json", "run_M1_family_s2.json", "run_M1_random_s0.json",
			"run_M2_family_s0.json", "run_M2_family_s1.json", "run_M2_family_s2.json", "run_M2_random_s0.json",
			"run_M3_family_s0.json", "run_M3_family_s1.json", "run_M3_family_s2.json", "run_M3_random_s0.json"},
		"query207_ourTeam": {"esmfold_plddts.json"},
		"query220_ourTeam": {"invariant_baseline_test_results.json", "se3_gvp_small_test_results.json", "se3_gvp_test_results.json"},
	}
)

type resultFile struct {
	rel  string
	body string
}

// ResultsAppendix is the reference's "Full JSON artifacts under results/"
// body for a workspace export tar: every results/**/*.json file in path
// order, each cut to perFile characters (head and tail kept), until total
// characters are used; the rest listed as omitted. 0 means no cap.
// Links are not followed (the reference's pathlib does follow them).
func ResultsAppendix(export, queryName string, perFile, total int) (string, error) {
	f, err := os.Open(export)
	if err != nil {
		return "", fmt.Errorf("open workspace export: %w", err)
	}
	defer f.Close()
	files, hasDir, err := readResults(f, excludedResults(queryName))
	if err != nil {
		return "", err
	}
	return renderResults(files, hasDir, perFile, total), nil
}

func excludedResults(queryName string) map[string]bool {
	ex := map[string]bool{}
	for _, n := range append(append([]string(nil), resultsExcludedGlobally...), resultsExcludedByQuery[queryName]...) {
		ex[n] = true
	}
	return ex
}

func readResults(r io.Reader, excluded map[string]bool) ([]resultFile, bool, error) {
	var files []resultFile
	hasDir := false
	tr := tar.NewReader(r)
	for n := 0; n < 1_000_000; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("read workspace export: %w", err)
		}
		name := path.Clean("/" + strings.TrimPrefix(h.Name, "./"))[1:]
		if name == "results" && h.Typeflag == tar.TypeDir || strings.HasPrefix(name, "results/") {
			hasDir = true
		}
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(name, "results/") || !strings.HasSuffix(name, ".json") ||
			excluded[path.Base(name)] {
			continue
		}
		if h.Size > MaxResultsFileBytes {
			files = append(files, resultFile{rel: name, body: fmt.Sprintf("<read error: %d bytes, more than the %d this appendix reads>", h.Size, MaxResultsFileBytes)})
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, MaxResultsFileBytes))
		if err != nil {
			return nil, false, fmt.Errorf("read %s from workspace export: %w", name, err)
		}
		files = append(files, resultFile{rel: name, body: pyText(b)})
	}
	sort.Slice(files, func(i, j int) bool { return pathLess(files[i].rel, files[j].rel) })
	return files, hasDir, nil
}

// pyText is Python's read_text(errors="replace"): invalid UTF-8 becomes
// U+FFFD and line ends are translated to \n.
func pyText(b []byte) string {
	var s strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		s.WriteRune(r)
		b = b[n:]
	}
	return strings.ReplaceAll(strings.ReplaceAll(s.String(), "\r\n", "\n"), "\r", "\n")
}

// pathLess orders paths as pathlib does: part by part.
func pathLess(a, b string) bool {
	pa, pb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

func renderResults(files []resultFile, hasDir bool, perFile, total int) string {
	if !hasDir {
		return "- `results/` directory is missing."
	}
	if len(files) == 0 {
		return "- No JSON files found under `results/`."
	}
	var blocks, omitted []string
	used := 0
	for _, f := range files {
		body, flag := f.body, ""
		if n := utf8.RuneCountInString(body); perFile > 0 && n > perFile {
			half := perFile / 2
			rs := []rune(body)
			body = string(rs[:half]) + "\n... [truncated: middle omitted] ...\n" + string(rs[n-(perFile-half):])
			flag = " [truncated]"
		}
		n := utf8.RuneCountInString(body)
		if total > 0 && used+n > total {
			omitted = append(omitted, f.rel)
			continue
		}
		used += n
		blocks = append(blocks, "### File: `"+f.rel+"`"+flag, "```", body, "```")
	}
	if len(omitted) > 0 {
		blocks = append(blocks, "- Omitted due to appendix character budget: `"+strings.Join(omitted, "`, `")+"`")
	}
	return strings.Join(blocks, "\n\n")
}

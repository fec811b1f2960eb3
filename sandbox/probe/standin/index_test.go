package standin

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const demoModule = "def answer():\n    return 42\n"

func demoIndex(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	whl, err := WriteWheel(dir, "mass_demo", "0.1.0", map[string]string{"mass_demo/__init__.py": demoModule})
	if err != nil {
		t.Fatal(err)
	}
	return dir, whl
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The wheel's RECORD holds each file's urlsafe-base64 sha256 and size.
func TestWriteWheelRecord(t *testing.T) {
	_, whl := demoIndex(t)
	zr, err := zip.OpenReader(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]string{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	record := files["mass_demo-0.1.0.dist-info/RECORD"]
	sum := sha256.Sum256([]byte(demoModule))
	if want := "mass_demo/__init__.py,sha256=" + base64.RawURLEncoding.EncodeToString(sum[:]) + "," + strconv.Itoa(len(demoModule)) + "\n"; !strings.Contains(record, want) {
		t.Errorf("RECORD %q lacks %q", record, want)
	}
	if !strings.Contains(files["mass_demo-0.1.0.dist-info/WHEEL"], "Tag: py3-none-any") || len(files) != 4 {
		t.Errorf("wheel files %v", files)
	}
	if _, err := WriteWheel(t.TempDir(), "x", "1", map[string]string{"../evil.py": ""}); err == nil {
		t.Error("a wheel file outside the archive root was accepted")
	}
}

func TestIndexPages(t *testing.T) {
	dir, whl := demoIndex(t)
	ix, err := NewIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ix)
	defer srv.Close()
	if code, body := get(t, srv.URL+"/simple/"); code != 200 || !strings.Contains(body, `href="/simple/mass-demo/"`) {
		t.Errorf("/simple/: %d %q", code, body)
	}
	data, _ := os.ReadFile(whl)
	sum := sha256.Sum256(data)
	want := `href="/packages/mass_demo-0.1.0-py3-none-any.whl#sha256=` + hex.EncodeToString(sum[:]) + `"`
	for _, name := range []string{"mass-demo", "Mass_Demo", "mass.demo"} {
		if code, body := get(t, srv.URL+"/simple/"+name+"/"); code != 200 || !strings.Contains(body, want) {
			t.Errorf("/simple/%s/: %d %q, want %s", name, code, body, want)
		}
	}
	if code, body := get(t, srv.URL+"/packages/mass_demo-0.1.0-py3-none-any.whl"); code != 200 || body != string(data) {
		t.Errorf("package: %d, %d bytes", code, len(body))
	}
	for _, p := range []string{"/simple/other/", "/packages/../index.go", "/"} {
		if code, _ := get(t, srv.URL+p); code != 404 {
			t.Errorf("%s: %d, want 404", p, code)
		}
	}
	if _, err := NewIndex(t.TempDir()); err == nil {
		t.Error("an index without wheels was accepted")
	}
}

// The host's pip installs the wheel from the index: the index and the
// wheel are what pip expects, not what this package thinks it expects.
func TestIndexHostPip(t *testing.T) {
	if exec.Command("python3", "-m", "pip", "--version").Run() != nil {
		t.Skip("no python3 -m pip on this host")
	}
	dir, _ := demoIndex(t)
	ix, err := NewIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ix)
	defer srv.Close()
	target := t.TempDir()
	cmd := exec.Command("python3", "-m", "pip", "install", "--isolated", "--no-cache-dir", "--disable-pip-version-check",
		"--target", target, "--index-url", srv.URL+"/simple/", "mass-demo==0.1.0")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PIP_CONFIG_FILE=/dev/null"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	run := exec.Command("python3", "-c", "import mass_demo; print(mass_demo.answer())")
	run.Env = []string{"PATH=" + os.Getenv("PATH"), "PYTHONPATH=" + target}
	out, err := run.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Errorf("import the installed package: %v %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(target, "mass_demo-0.1.0.dist-info", "RECORD")); err != nil {
		t.Errorf("pip left no RECORD: %v", err)
	}
}

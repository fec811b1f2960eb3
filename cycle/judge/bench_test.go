package judge

import (
	"archive/tar"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkBundlePrompt measures massd's own work per bundle-mode judgment
// side: reading a 300-file export (reports, JSON, code, a 4 MiB data
// file), building and rendering the bundle; run with -bench BundlePrompt.
func BenchmarkBundlePrompt(b *testing.B) {
	ents := []ent{{name: "data.bin", typ: tar.TypeReg, size: 4 << 20}}
	for i := 0; i < 100; i++ {
		ents = append(ents,
			ent{name: fmt.Sprintf("reports/r%03d.md", i), typ: tar.TypeReg, body: strings.Repeat("finding line\n", 200)},
			ent{name: fmt.Sprintf("results/m%03d.json", i), typ: tar.TypeReg, body: `{"acc": 0.91, "folds": [1,2,3]}`},
			ent{name: fmt.Sprintf("src/s%03d.py", i), typ: tar.TypeReg, body: strings.Repeat("x = 1\n", 500)})
	}
	data := mkTar(b, ents...)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bu, err := Build(bytes.NewReader(data), []string{"reports/r000.md", "results/*.json"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := RenderPrompt(Task{Prompt: "task"}, bu.Render(), bu.Render()); err != nil {
			b.Fatal(err)
		}
	}
}

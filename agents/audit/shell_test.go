package audit

import "testing"

func TestShellAttribution(t *testing.T) {
	const o, w1 = "orchestrator", "worker-1"
	tests := []struct {
		name  string
		build func(b *episodeBuilder)
		want  []ShellChange
	}{
		{"finishing agent among several shell users", func(b *episodeBuilder) {
			b.shell(o, "make data")
			b.shell(w1, "python gen.py")
			b.finish(w1, "final", []string{"data.csv"}, map[string]string{"/workspace/data.csv": "1"})
		}, []ShellChange{{Path: "/workspace/data.csv", Change: "changed", Agent: w1, FinishSeq: 5}}},
		{"only the orchestrator ran a shell", func(b *episodeBuilder) {
			b.shell(o, "make data")
			b.write(w1, "write_file", "/workspace/gen.py", "", "g")
			b.finish(w1, "final", []string{"data.csv", "gen.py"}, map[string]string{"/workspace/data.csv": "1", "/workspace/gen.py": "g"})
		}, []ShellChange{{Path: "/workspace/data.csv", Change: "changed", Agent: o, FinishSeq: 5}}},
		{"no shell at all", func(b *episodeBuilder) {
			b.finish(w1, "final", []string{"x.bin"}, map[string]string{"/workspace/x.bin": "1"})
		}, []ShellChange{{Path: "/workspace/x.bin", Change: "changed", Agent: "", FinishSeq: 3}}},
		{"write then shell rewrote it", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.shell(w1, "sed -i s/a/b/ a.py")
			b.finish(w1, "final", []string{"a.py"}, map[string]string{"/workspace/a.py": "2"})
		}, []ShellChange{{Path: "/workspace/a.py", Change: "changed", Agent: w1, FinishSeq: 5}}},
		{"without a manifest a write explains the path", func(b *episodeBuilder) {
			b.write(w1, "write_file", "/workspace/a.py", "", "1")
			b.shell(w1, "true")
			b.finish(w1, "final", []string{"a.py"}, nil)
		}, nil},
		{"created and modified against the previous manifest", func(b *episodeBuilder) {
			b.finish(w1, "final", []string{}, map[string]string{"/workspace/old.txt": "1"})
			b.start("worker-2", RoleWorker, o)
			b.shell("worker-2", "touch new.txt; echo >> old.txt")
			b.finish("worker-2", "final", []string{"new.txt", "old.txt"}, map[string]string{"/workspace/old.txt": "2", "/workspace/new.txt": "3"})
		}, []ShellChange{
			{Path: "/workspace/new.txt", Change: "created", Agent: "worker-2", FinishSeq: 6},
			{Path: "/workspace/old.txt", Change: "modified", Agent: "worker-2", FinishSeq: 6},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newEpisode(t, "ep-s")
			b.start(o, RoleOrchestrator, "")
			b.start(w1, RoleWorker, o)
			tt.build(b)
			r := audit(t, b.done(), "ep-s")
			if len(r.ShellChanges) != len(tt.want) {
				t.Fatalf("shell changes = %+v, want %+v", r.ShellChanges, tt.want)
			}
			for i := range tt.want {
				if got, want := r.ShellChanges[i], tt.want[i]; got != want {
					t.Errorf("change %d = %+v, want %+v", i, got, want)
				}
			}
		})
	}
}

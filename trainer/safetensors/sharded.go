package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mass-dev/mass/errclass"
)

// IndexFile is the name of the shard index in a model folder.
const IndexFile = "model.safetensors.index.json"

// Index is model.safetensors.index.json.
type Index struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// ParseIndex validates index JSON and returns its shard file names, sorted.
// Shard names must be plain file names inside the model folder.
func ParseIndex(b []byte) ([]string, error) {
	var ix Index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, IndexFile, err)
	}
	if len(ix.WeightMap) == 0 {
		return nil, fmt.Errorf("%w: %s has an empty weight_map", ErrInvalid, IndexFile)
	}
	var shards []string
	seen := map[string]bool{}
	for _, f := range ix.WeightMap {
		if f == "" || f != filepath.Base(f) || strings.HasPrefix(f, ".") || strings.ContainsRune(f, 0) {
			return nil, fmt.Errorf("%w: %s names shard %q outside the folder", ErrInvalid, IndexFile, f)
		}
		if !seen[f] {
			seen[f] = true
			shards = append(shards, f)
		}
	}
	sort.Strings(shards)
	return shards, nil
}

// Model is a set of safetensors files seen as one name space.
type Model struct {
	files  []*File
	byName map[string]*File
}

// OpenModel opens a model folder: the shards named by
// model.safetensors.index.json when present, else model.safetensors, else
// every *.safetensors file in dir. Shard names must be plain file names.
func OpenModel(dir string) (*Model, error) {
	var shards []string
	idx, err := os.ReadFile(filepath.Join(dir, IndexFile))
	switch {
	case err == nil:
		if shards, err = ParseIndex(idx); err != nil {
			return nil, err
		}
	case errors.Is(err, os.ErrNotExist):
		if _, err := os.Stat(filepath.Join(dir, "model.safetensors")); err == nil {
			shards = []string{"model.safetensors"}
		} else {
			m, _ := filepath.Glob(filepath.Join(dir, "*.safetensors"))
			for _, p := range m {
				shards = append(shards, filepath.Base(p))
			}
		}
	default:
		return nil, fmt.Errorf("read %s: %w", IndexFile, err)
	}
	if len(shards) == 0 {
		return nil, errclass.Mark(fmt.Errorf("no safetensors files in %s (want model.safetensors or %s)", dir, IndexFile), errclass.ErrNotFound)
	}
	m := &Model{byName: map[string]*File{}}
	for _, s := range shards {
		f, err := Open(filepath.Join(dir, s))
		if err != nil {
			m.Close()
			return nil, err
		}
		m.files = append(m.files, f)
		for n := range f.Header.Tensors {
			if _, dup := m.byName[n]; dup {
				m.Close()
				return nil, fmt.Errorf("%w: tensor %q appears in two shards", ErrInvalid, n)
			}
			m.byName[n] = f
		}
	}
	return m, nil
}

// Names returns all tensor names, sorted.
func (m *Model) Names() []string {
	out := make([]string, 0, len(m.byName))
	for n := range m.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the model holds a tensor.
func (m *Model) Has(name string) bool { _, ok := m.byName[name]; return ok }

// Info describes a tensor.
func (m *Model) Info(name string) (TensorInfo, bool) {
	f, ok := m.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Info(name)
}

// Float32s returns a tensor converted to float32 and its shape.
func (m *Model) Float32s(name string) ([]float32, []int, error) {
	f, ok := m.byName[name]
	if !ok {
		return nil, nil, fmt.Errorf("tensor %q not found in model", name)
	}
	return f.Float32s(name)
}

// Evict is File.Evict on the shard holding name.
func (m *Model) Evict(name string) error {
	if f, ok := m.byName[name]; ok {
		return f.Evict(name)
	}
	return nil
}

// Close unmaps every shard.
func (m *Model) Close() error {
	var first error
	for _, f := range m.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// WriteSharded writes tensors into dir as model-0000i-of-0000n.safetensors
// shards of at most maxShardBytes each (one shard when everything fits, named
// model.safetensors) and, when sharded, the index file.
func WriteSharded(dir string, tensors []Tensor, maxShardBytes int64) error {
	ts := append([]Tensor(nil), tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	var groups [][]Tensor
	var cur []Tensor
	var size, total int64
	for _, t := range ts {
		n := int64(len(t.Data))
		if len(cur) > 0 && size+n > maxShardBytes {
			groups = append(groups, cur)
			cur, size = nil, 0
		}
		cur = append(cur, t)
		size += n
		total += n
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	meta := map[string]string{"format": "pt"}
	if len(groups) <= 1 {
		return Write(filepath.Join(dir, "model.safetensors"), ts, meta)
	}
	ix := Index{Metadata: map[string]any{"total_size": total}, WeightMap: map[string]string{}}
	for i, g := range groups {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(groups))
		if err := Write(filepath.Join(dir, name), g, meta); err != nil {
			return err
		}
		for _, t := range g {
			ix.WeightMap[t.Name] = name
		}
	}
	js, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, IndexFile), append(js, '\n'), 0o644)
}

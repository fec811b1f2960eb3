package taskspec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Load reads, parses and validates the spec at p, including that its inputs
// and workflow exist. Errors name the file.
func Load(p string) (*Spec, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open task spec: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read task spec %s: %w", p, err)
	}
	s, err := Parse(data)
	if err != nil {
		var es Errors
		if errors.As(err, &es) {
			return nil, es.withFile(p)
		}
		return nil, err
	}
	abs, err := filepath.Abs(filepath.Dir(p))
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", p, err)
	}
	s.Dir = abs
	if es := Validate(s); len(es) > 0 {
		return nil, es.withFile(p)
	}
	return s, nil
}

// Validate checks the spec's values and, when s.Dir is set, that every input
// and the workflow file exist below s.Dir as regular files or directories
// (symbolic links are refused so a copy never leaves the spec's directory).
func Validate(s *Spec) Errors {
	errs := s.check()
	if s.Dir == "" || len(errs) > 0 {
		return errs
	}
	exists := func(field, rel string, wantFile bool) {
		st, err := os.Lstat(filepath.Join(s.Dir, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf("%q does not exist next to the spec (%s)", rel, s.Dir)})
		case err != nil:
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: err.Error()})
		case st.Mode()&fs.ModeSymlink != 0:
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf("%q is a symbolic link; copy the real file there", rel)})
		case wantFile && !st.Mode().IsRegular():
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf("%q must be a regular file", rel)})
		case !st.Mode().IsRegular() && !st.IsDir():
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf("%q must be a file or directory", rel)})
		}
	}
	for i, in := range s.Inputs {
		exists(fmt.Sprintf("inputs[%d].path", i), in.Path, false)
	}
	for i, in := range s.HiddenPaths {
		exists(fmt.Sprintf("hidden_paths[%d].path", i), in.Path, false)
	}
	if s.Workflow != "" {
		exists("workflow", s.Workflow, true)
	}
	return errs
}

// Files lists the spec-relative paths of every regular file the task needs
// (inputs and hidden paths expanded recursively, plus the workflow file), in a stable order.
// Symbolic links and other special files inside input directories are errors.
func (s *Spec) Files() ([]string, error) {
	if s.Dir == "" {
		return nil, fmt.Errorf("spec %s has no directory: %w", s.ID, fs.ErrInvalid)
	}
	var out []string
	seen := map[string]bool{}
	add := func(rel string) {
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	for _, in := range append(append([]Input{}, s.Inputs...), s.HiddenPaths...) {
		root := filepath.Join(s.Dir, filepath.FromSlash(in.Path))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch {
			case d.IsDir():
				return nil
			case d.Type().IsRegular():
				rel, err := filepath.Rel(s.Dir, p)
				if err != nil {
					return err
				}
				add(filepath.ToSlash(rel))
				return nil
			}
			return fmt.Errorf("input %s: %s is not a regular file or directory", in.Path, p)
		})
		if err != nil {
			return nil, fmt.Errorf("list inputs: %w", err)
		}
	}
	if s.Workflow != "" {
		add(filepath.ToSlash(filepath.Clean(s.Workflow)))
	}
	return out, nil
}

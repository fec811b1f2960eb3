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
// (a symbolic link anywhere on a path is refused, so a copy never leaves the
// spec's directory), and that their bytes together stay within
// MaxInputBytes.
func Validate(s *Spec) Errors {
	errs := s.check()
	if s.Dir == "" || len(errs) > 0 {
		return errs
	}
	exists := func(field, rel string, wantFile bool) {
		st, err := lstatBeneath(s.Dir, rel)
		switch {
		case errors.Is(err, errSymlink):
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf("%v; copy the real files there", err)})
		case errors.Is(err, fs.ErrNotExist):
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: fmt.Sprintf("%q does not exist next to the spec (%s)", rel, s.Dir)})
		case err != nil:
			errs = append(errs, &FieldError{Line: s.line(field), Field: field, Msg: err.Error()})
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
	if s.Directive != "" {
		exists("directive", s.Directive, true)
	}
	if s.QueryTemplate != "" {
		exists("query_template", s.QueryTemplate, true)
	}
	if len(errs) > 0 {
		return errs
	}
	if _, total, err := s.walk(); err != nil {
		errs = append(errs, &FieldError{Line: s.line("inputs"), Field: "inputs", Msg: err.Error()})
	} else if total > MaxInputBytes {
		errs = append(errs, &FieldError{Line: s.line("inputs"), Field: "inputs", Msg: fmt.Sprintf("the task's files hold %d bytes; the limit is %d (half the workspace export cap)", total, MaxInputBytes)})
	}
	return errs
}

// Files lists the spec-relative paths of every regular file the task needs
// (inputs and hidden paths expanded recursively, plus the workflow file), in
// a stable order. Symbolic links (anywhere on a path) and other special
// files are errors.
func (s *Spec) Files() ([]string, error) {
	out, _, err := s.walk()
	return out, err
}

// walk lists the task's files as Files does and adds up their sizes.
func (s *Spec) walk() ([]string, int64, error) {
	if s.Dir == "" {
		return nil, 0, fmt.Errorf("spec %s has no directory: %w", s.ID, fs.ErrInvalid)
	}
	var out []string
	var total int64
	seen := map[string]bool{}
	add := func(rel string, size int64) {
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
			total += size
		}
	}
	for _, in := range append(append([]Input{}, s.Inputs...), s.HiddenPaths...) {
		if _, err := lstatBeneath(s.Dir, in.Path); err != nil {
			return nil, 0, fmt.Errorf("input %s: %w", in.Path, err)
		}
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
				info, err := d.Info()
				if err != nil {
					return err
				}
				add(filepath.ToSlash(rel), info.Size())
				return nil
			}
			return fmt.Errorf("input %s: %s is not a regular file or directory", in.Path, p)
		})
		if err != nil {
			return nil, 0, fmt.Errorf("list inputs: %w", err)
		}
	}
	if s.Workflow != "" {
		st, err := lstatBeneath(s.Dir, s.Workflow)
		if err != nil {
			return nil, 0, fmt.Errorf("workflow %s: %w", s.Workflow, err)
		}
		add(filepath.ToSlash(filepath.Clean(s.Workflow)), st.Size())
	}
	if s.Directive != "" {
		st, err := lstatBeneath(s.Dir, s.Directive)
		if err != nil {
			return nil, 0, fmt.Errorf("directive %s: %w", s.Directive, err)
		}
		add(filepath.ToSlash(filepath.Clean(s.Directive)), st.Size())
	}
	if s.QueryTemplate != "" {
		st, err := lstatBeneath(s.Dir, s.QueryTemplate)
		if err != nil {
			return nil, 0, fmt.Errorf("query_template %s: %w", s.QueryTemplate, err)
		}
		add(filepath.ToSlash(filepath.Clean(s.QueryTemplate)), st.Size())
	}
	return out, total, nil
}

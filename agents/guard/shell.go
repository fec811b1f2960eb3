package guard

import (
	"path"
	"strings"
)

// A shell command is read the way a reviewer skims it: split into simple
// commands at ; & | && || newlines and parentheses, words unquoted, and
// each command's written operands picked by its verb. It is a heuristic
// over the recorded text, never executed; docs/formats.md lists the verbs.

// writeAll verbs write (or remove, or change the mode of) every operand.
var writeAll = map[string]bool{"rm": true, "rmdir": true, "unlink": true, "shred": true, "touch": true, "truncate": true,
	"chmod": true, "chown": true, "chgrp": true, "chattr": true, "setfacl": true, "mv": true, "tee": true}

// writeLast verbs write their last operand (the destination).
var writeLast = map[string]bool{"cp": true, "install": true, "ln": true, "rsync": true}

// copyVerbs read their leading operands into the last one.
var copyVerbs = map[string]bool{"cp": true, "install": true, "rsync": true}

// wrappers run the command that follows them.
var wrappers = map[string]bool{"sudo": true, "env": true, "command": true, "busybox": true, "nice": true, "nohup": true, "time": true, "exec": true}

// simple is one simple command: its verb, operands and redirect targets.
type simple struct {
	verb      string
	operands  []string // non-option words after the verb
	redirects []string // targets of > >> >| &>
	words     []string // every word, verb included
}

// Analysis is what one shell command touches, as workspace paths.
type Analysis struct {
	Writes   []string    // paths written, moved, removed or re-moded
	Mentions []string    // every word that looks like a path, resolved
	Copies   [][2]string // (source, destination) of cp/install/rsync and `cat SRC > DST`
}

// Analyze reads cmd run in dir (an absolute container path).
func Analyze(cmd, dir string) Analysis {
	var a Analysis
	for _, s := range parse(cmd) {
		for _, w := range s.words {
			if looksLikePath(w) {
				a.Mentions = append(a.Mentions, resolve(w, dir))
			}
		}
		for _, r := range s.redirects {
			a.Writes = append(a.Writes, resolve(r, dir))
			a.Mentions = append(a.Mentions, resolve(r, dir))
		}
		ops := s.operands
		if (s.verb == "chmod" || s.verb == "chown" || s.verb == "chgrp") && len(ops) > 0 {
			ops = ops[1:] // the mode or owner
		}
		switch {
		case s.verb == "cd" && len(ops) > 0:
			dir = resolve(ops[0], dir)
		case writeAll[s.verb]:
			for _, o := range ops {
				a.Writes = append(a.Writes, resolve(o, dir))
			}
		case writeLast[s.verb] && len(ops) > 1:
			a.Writes = append(a.Writes, resolve(ops[len(ops)-1], dir))
		case s.verb == "sed" || s.verb == "perl":
			if hasInPlace(s.words) {
				for _, o := range ops {
					a.Writes = append(a.Writes, resolve(o, dir))
				}
			}
		case s.verb == "dd":
			for _, o := range ops {
				if t, ok := strings.CutPrefix(o, "of="); ok {
					a.Writes = append(a.Writes, resolve(t, dir))
				}
			}
		}
		if copyVerbs[s.verb] && len(ops) > 1 {
			for _, src := range ops[:len(ops)-1] {
				a.Copies = append(a.Copies, [2]string{resolve(src, dir), resolve(ops[len(ops)-1], dir)})
			}
		}
		if s.verb == "cat" && len(s.redirects) > 0 {
			for _, src := range ops {
				a.Copies = append(a.Copies, [2]string{resolve(src, dir), resolve(s.redirects[len(s.redirects)-1], dir)})
			}
		}
	}
	return a
}

func hasInPlace(words []string) bool {
	for _, w := range words {
		if w == "-i" || strings.HasPrefix(w, "-i") || strings.HasPrefix(w, "--in-place") || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "i")) {
			return true
		}
	}
	return false
}

func looksLikePath(w string) bool {
	return strings.Contains(w, "/") || strings.Contains(w, ".") && !strings.HasPrefix(w, "-")
}

// resolve makes w an absolute clean path taken from dir.
func resolve(w, dir string) string {
	if !path.IsAbs(w) {
		w = path.Join(dir, w)
	}
	return path.Clean(w)
}

// parse splits cmd into simple commands.
func parse(cmd string) []simple {
	var out []simple
	for _, words := range split(cmd) {
		var s simple
		for i := 0; i < len(words); i++ {
			w := words[i]
			if t, ok := redirectTarget(w); ok {
				if t == "" && i+1 < len(words) {
					i++
					t = words[i]
				}
				if t != "" && !strings.HasPrefix(t, "&") {
					s.redirects = append(s.redirects, t)
				}
				continue
			}
			s.words = append(s.words, w)
			switch {
			case s.verb == "" && strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
				// VAR=value before the verb
			case s.verb == "" && wrappers[path.Base(w)]:
			case s.verb == "" && strings.HasPrefix(w, "-"):
			case s.verb == "":
				s.verb = path.Base(w)
			case !strings.HasPrefix(w, "-") || w == "-":
				s.operands = append(s.operands, w)
			}
		}
		if s.verb != "" || len(s.redirects) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// redirectTarget recognizes an output redirection word: ">" ">>" "2>" "&>"
// ">|" alone (target in the next word, t == "") or glued to its target.
func redirectTarget(w string) (string, bool) {
	i := strings.IndexByte(w, '>')
	if i < 0 {
		return "", false
	}
	pre := w[:i]
	if pre != "" && pre != "&" && strings.Trim(pre, "0123456789") != "" {
		return "", false
	}
	rest := strings.TrimLeft(w[i:], ">|")
	return rest, true
}

// split tokenizes cmd into words, one list per simple command. Quotes group
// words; $( ) and backticks separate commands like parentheses.
func split(cmd string) [][]string {
	var cmds [][]string
	var cur []string
	var word strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			cur = append(cur, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(cur) > 0 {
			cmds = append(cmds, cur)
			cur = nil
		}
	}
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(cmd[i+1:], c)
			if j < 0 {
				j = len(cmd) - i - 1
			}
			word.WriteString(cmd[i+1 : i+1+j])
			inWord = true
			i += j + 1
		case c == '\\' && i+1 < len(cmd):
			i++
			word.WriteByte(cmd[i])
			inWord = true
		case c == ';' || c == '&' && !strings.HasSuffix(word.String(), ">") || c == '|' && !strings.HasSuffix(word.String(), ">") ||
			c == '\n' || c == '(' || c == ')' || c == '`' || c == '{' || c == '}':
			flushCmd()
		case c == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			flushCmd()
			i++
		case c == ' ' || c == '\t':
			flushWord()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flushCmd()
	return cmds
}

// Denied names the errno classes a command's stderr shows: EROFS, EACCES,
// EPERM, EBUSY (as coreutils, busybox and Python word them).
func Denied(stderr []byte) []string {
	s := strings.ToLower(string(stderr))
	var out []string
	for _, d := range []struct{ errno, text string }{
		{"EROFS", "read-only file system"}, {"EACCES", "permission denied"},
		{"EPERM", "operation not permitted"}, {"EBUSY", "resource busy"},
	} {
		if strings.Contains(s, d.text) || strings.Contains(s, strings.ToLower(d.errno)) {
			out = append(out, d.errno)
		}
	}
	return out
}

package prompts

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxDirectiveBytes caps an execution directive supplied in place of ours.
const MaxDirectiveBytes = 64 << 10

// ErrDirective classifies an unusable supplied directive.
var ErrDirective = errors.New("invalid execution directive")

// CheckDirective accepts a directive text supplied in place of ours (such
// as the reference's tasks/teacher_directive.txt): UTF-8 text, not blank,
// no NUL bytes, at most MaxDirectiveBytes. It is used verbatim.
func CheckDirective(text string) error {
	switch {
	case len(text) > MaxDirectiveBytes:
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrDirective, len(text), MaxDirectiveBytes)
	case !utf8.ValidString(text):
		return fmt.Errorf("%w: not UTF-8 text", ErrDirective)
	case strings.ContainsRune(text, 0):
		return fmt.Errorf("%w: contains a NUL byte", ErrDirective)
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%w: empty", ErrDirective)
	}
	return nil
}

// SearchPrompt is the first message of a workflow-search episode: the
// task and the design only, as the reference's rendered query (its
// execution directive is appended only at collection).
func SearchPrompt(task, workflow string) string {
	task = strings.TrimSpace(task)
	if strings.TrimSpace(workflow) == "" {
		return task
	}
	return task + "\n\n" + strings.TrimSpace(workflow)
}

// TeacherWith is Teacher with directive in place of ours when it is not
// empty. The supplied text is appended exactly as given (the reference
// appends its directive file, trailing newline included, after the
// workflow), so a run with the reference's directive sees the same bytes.
func TeacherWith(task, workflow, directive string) (string, error) {
	if directive == "" || strings.TrimSpace(workflow) == "" {
		return Teacher(task, workflow), nil
	}
	if err := CheckDirective(directive); err != nil {
		return "", err
	}
	return strings.TrimSpace(task) + "\n\n" + strings.TrimSpace(workflow) + "\n\n" + directive, nil
}

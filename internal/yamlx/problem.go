package yamlx

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrAliasBudget is the cause of the problem of a document whose aliases
// would expand past [AliasBudget] nodes.
var ErrAliasBudget = errors.New("too many alias expansions")

// SyntaxError is the cause of the problem of a file that is not YAML:
// yaml.v3's error. It ends the reading of the file.
type SyntaxError struct {
	Err error
}

func (e *SyntaxError) Error() string { return e.Err.Error() }
func (e *SyntaxError) Unwrap() error { return e.Err }

// Problem is one thing wrong with a YAML file: where (File, Line, Column,
// and Path, the field's path such as "expect[2].tool", "" for the document
// itself) and what (Msg). Err, when set, is the Go error behind Msg, for
// errors.Is and errors.As.
type Problem struct {
	File   string
	Line   int
	Column int
	Path   string
	Msg    string
	Err    error
}

// String formats the problem as "file:line: path: msg". Without a file
// (an error of a package that decodes no file itself) it reads "path: line
// N: msg", so that the caller can prefix where the value came from.
func (p Problem) String() string {
	var b strings.Builder
	if p.File == "" {
		if p.Path != "" {
			b.WriteString(p.Path + ": ")
		}
		if p.Line > 0 {
			fmt.Fprintf(&b, "line %d: ", p.Line)
		}
		b.WriteString(p.Msg)
		return b.String()
	}
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is String: a Problem is an error of its own.
func (p Problem) Error() string { return p.String() }

// Unwrap returns the cause.
func (p Problem) Unwrap() error { return p.Err }

// Errorf returns a Problem at path with a formatted message; a %w verb
// sets its Err. Packages that check values outside a file (a model's
// configuration) return it so that the reader can place it.
func Errorf(path string, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return Problem{Path: path, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// At returns err as a Problem at path (and line, when known). When err is
// itself a Problem without a file, its position below path is kept: a
// problem "calls[1].call" of a value at "scripted[2]" becomes
// "scripted[2].calls[1].call". A wrapped Problem is only text: its wrapper
// says what it is about.
func At(path string, line int, err error) error {
	p, ok := err.(Problem)
	if !ok || p.File != "" {
		return Problem{Path: path, Line: line, Msg: err.Error(), Err: err}
	}
	p.Path = Join(path, p.Path)
	if p.Line == 0 {
		p.Line = line
	}
	return p
}

// Join appends a path segment: a key ("a" + "b" = "a.b") or an index or
// a sub-path starting with "[" ("a" + "[2].b" = "a[2].b").
func Join(path, rest string) string {
	switch {
	case path == "":
		return rest
	case rest == "":
		return path
	case rest[0] == '[':
		return path + rest
	}
	return path + "." + rest
}

// Index is path[i].
func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// Error is every problem found, sorted by file and line.
type Error struct {
	Problems []Problem
}

// Error prints one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, so that errors.As finds the first Problem
// and errors.Is finds any problem's cause.
func (e *Error) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p
	}
	return errs
}

// Problems collects the problems of one load, over every file and
// document it reads. The zero value is ready to use.
type Problems struct {
	list []Problem
}

// Add records a problem.
func (ps *Problems) Add(p Problem) { ps.list = append(ps.list, p) }

// Len is the number of problems recorded so far, for telling whether a
// step added any.
func (ps *Problems) Len() int { return len(ps.list) }

// Sorted returns the problems sorted by file and line (in the order found
// on the same line), without repeats: a value an alias reaches twice
// repeats its problems.
func (ps *Problems) Sorted() []Problem {
	out := slices.Clone(ps.list)
	Sort(out)
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(p Problem) bool {
		key := p.String()
		if seen[key] {
			return true
		}
		seen[key] = true
		return false
	})
}

// Err returns nil without problems, else an *Error with them sorted.
func (ps *Problems) Err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.Sorted()}
}

// Sort orders problems by file and line, keeping the order they were found
// in on the same line.
func Sort(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
}

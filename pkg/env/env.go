// SPDX-License-Identifier: Apache-2.0

// Package env reads mlops.env as kustomize v5.8's configMapGenerator reads an `envs:` file
// (kv.keyValuesFromLines), so the function acts on the values the containers get, and decodes its known keys
// into typed settings. Parse is stricter where kustomize silently produces something unusable: a key must be
// a valid environment variable name (kustomize's validator is a no-op), and a line with an empty key ("=x")
// or longer than bufio.MaxScanTokenSize is an error (kustomize drops it, the latter with every line after).
package env

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Entry is one KEY=VALUE pair of an env file, with its 1-based line (0 from a ConfigMap).
type Entry struct {
	Key, Value string
	Line       int
	// Bare is set for a line with no "=": kustomize gives it the empty value.
	Bare bool
}

// File is an env file's entries in file order; Source names it for messages (mlops.env, ConfigMap/mlops-env).
type File struct {
	Source  string
	Entries []Entry
}

// ParseError names the file, line, the offending text and what is accepted.
type ParseError struct {
	Source string
	Line   int
	Text   string // the offending line (or key)
	Reason string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %q: %s", e.Source, e.Line, e.Text, e.Reason)
}

// ParseErrors are the bad lines of one file, in line order; errors.As with a *ParseError finds the first.
type ParseErrors []*ParseError

// Error puts each bad line on a line of its own.
func (es ParseErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the elements, for errors.Is and errors.As.
func (es ParseErrors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// envVarNameRule is Kubernetes' wording of what IsEnvVarName accepts, without its regular expression.
const envVarNameRule = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"

// longLineText is how much of an over-long line a ParseError quotes.
const longLineText = 40

// Parse reads data as kustomize v5.8 reads a generator's envs: lines as bufio.ScanLines splits them,
// invalid UTF-8 rejected, a BOM dropped from the first line, leading whitespace dropped (trailing is part of
// the value), blank and '#' lines skipped, split at the first '=', quotes kept, a line without '=' giving the
// empty value, a repeated key rejected. The error, if any, is a ParseErrors naming every bad line (nil File).
func Parse(source string, data []byte) (*File, error) {
	f := &File{Source: source}
	var errs ParseErrors
	seen := map[string]int{} // key -> line
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 1 // after the loop, the line the scanner stopped at
	for ; sc.Scan(); line++ {
		raw := sc.Bytes()
		if line == 1 {
			raw = bytes.TrimPrefix(raw, utf8BOM)
		}
		text := string(bytes.TrimLeftFunc(raw, unicode.IsSpace))
		key, value, hasEq := strings.Cut(text, "=")
		first, repeated := seen[key]
		reason := keyError(key)
		switch {
		case !utf8.Valid(raw):
			reason = "invalid UTF-8: an env file must be UTF-8 text"
		case text == "" || text[0] == '#':
			continue
		case reason == "" && repeated:
			reason = fmt.Sprintf("key %s repeats line %d: kustomize's configMapGenerator rejects a repeated key; keep one", key, first)
		case reason == "":
			seen[key] = line
			f.Entries = append(f.Entries, Entry{Key: key, Value: value, Line: line, Bare: !hasEq})
			continue
		}
		errs = append(errs, &ParseError{Source: source, Line: line, Text: string(raw), Reason: reason})
	}
	if err := sc.Err(); err != nil {
		// The line the scanner stopped at, after each line it took and its "\n".
		rest := data
		for range line - 1 {
			_, rest, _ = bytes.Cut(rest, []byte("\n"))
		}
		if len(rest) > longLineText {
			rest = append(rest[:longLineText:longLineText], "..."...)
		}
		reason := err.Error()
		if errors.Is(err, bufio.ErrTooLong) {
			reason = fmt.Sprintf("line is longer than %d bytes: kustomize silently drops it and every line after it; accepted: shorter lines", bufio.MaxScanTokenSize)
		}
		// The scanner stops here: the lines after it go unchecked.
		errs = append(errs, &ParseError{Source: source, Line: line, Text: string(rest), Reason: reason})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return f, nil
}

// keyError says why key is not a valid environment variable name, or returns "".
func keyError(key string) string {
	switch {
	case key == "":
		return `the line has no key before "="; accepted: KEY=value`
	case len(validation.IsEnvVarName(key)) == 0:
		return ""
	case strings.TrimRightFunc(key, unicode.IsSpace) != key:
		return fmt.Sprintf(`%q is not a valid key: remove the whitespace before "="; %s`, key, envVarNameRule)
	case key == "." || strings.HasPrefix(key, ".."):
		return fmt.Sprintf("%q is not a valid key: it must not be '.' or start with '..'", key)
	default:
		return fmt.Sprintf("%q is not a valid key: %s", key, envVarNameRule)
	}
}

// FromMap builds a File from ConfigMap data (keys sorted, Line 0).
func FromMap(source string, data map[string]string) *File {
	f := &File{Source: source}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		f.Entries = append(f.Entries, Entry{Key: k, Value: data[k]})
	}
	return f
}

// Lookup returns the entry for key.
func (f *File) Lookup(key string) (Entry, bool) {
	if i := slices.IndexFunc(f.Entries, func(e Entry) bool { return e.Key == key }); i >= 0 {
		return f.Entries[i], true
	}
	return Entry{}, false
}

// Map returns the entries as key -> value, as the ConfigMap's data holds them.
func (f *File) Map() map[string]string {
	m := make(map[string]string, len(f.Entries))
	for _, e := range f.Entries {
		m[e.Key] = e.Value
	}
	return m
}

// SPDX-License-Identifier: Apache-2.0

package env

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Entry
	}{
		{name: "empty file", in: ""},
		{name: "only comments and blank lines", in: "# a comment\n\n   \n\t# indented comment\n"},
		{
			name: "comments and blank lines keep line numbers",
			in:   "# header\n\nWORKERS=2\n  # note\nCPU=4\n",
			want: []Entry{{Key: "WORKERS", Value: "2", Line: 3}, {Key: "CPU", Value: "4", Line: 5}},
		},
		{
			name: "leading whitespace is dropped, also unicode spaces",
			in:   "  \tA=1\n\u00a0B=2\n",
			want: []Entry{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "2", Line: 2}},
		},
		{
			name: "value whitespace is kept on both sides",
			in:   "A=1  \nB=  x\t\n",
			want: []Entry{{Key: "A", Value: "1  ", Line: 1}, {Key: "B", Value: "  x\t", Line: 2}},
		},
		{
			name: "split at the first =",
			in:   "A=b=c\nB==\n",
			want: []Entry{{Key: "A", Value: "b=c", Line: 1}, {Key: "B", Value: "=", Line: 2}},
		},
		{
			name: "empty value is not bare",
			in:   "A=\n",
			want: []Entry{{Key: "A", Value: "", Line: 1}},
		},
		{
			name: "quotes are kept",
			in:   "A=\"x\"\nB='y'\n",
			want: []Entry{{Key: "A", Value: `"x"`, Line: 1}, {Key: "B", Value: "'y'", Line: 2}},
		},
		{
			name: "# after the key is part of the value",
			in:   "A=1 # not a comment\n",
			want: []Entry{{Key: "A", Value: "1 # not a comment", Line: 1}},
		},
		{
			name: "BOM dropped on the first line",
			in:   "\ufeffA=1\n",
			want: []Entry{{Key: "A", Value: "1", Line: 1}},
		},
		{
			name: "BOM dropped before a first-line comment",
			in:   "\ufeff# c\nA=1\n",
			want: []Entry{{Key: "A", Value: "1", Line: 2}},
		},
		{
			name: "CRLF line ends",
			in:   "A=1\r\nB=2\r\n",
			want: []Entry{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "2", Line: 2}},
		},
		{
			name: "only one CR is dropped before LF",
			in:   "A=1\r\r\n",
			want: []Entry{{Key: "A", Value: "1\r", Line: 1}},
		},
		{
			name: "a lone CR does not end a line",
			in:   "A=x\rB=y\n",
			want: []Entry{{Key: "A", Value: "x\rB=y", Line: 1}},
		},
		{
			name: "no final newline",
			in:   "A=1\nB=2",
			want: []Entry{{Key: "A", Value: "1", Line: 1}, {Key: "B", Value: "2", Line: 2}},
		},
		{
			name: "bare key gets the empty value",
			in:   "A\nB=2\n",
			want: []Entry{{Key: "A", Value: "", Line: 1, Bare: true}, {Key: "B", Value: "2", Line: 2}},
		},
		{
			name: "dots, dashes and underscores in keys",
			in:   "my.key-1=x\n_=y\n-=z\n",
			want: []Entry{{Key: "my.key-1", Value: "x", Line: 1}, {Key: "_", Value: "y", Line: 2}, {Key: "-", Value: "z", Line: 3}},
		},
		{
			name: "unicode values",
			in:   "NAME=naïve 日本\n",
			want: []Entry{{Key: "NAME", Value: "naïve 日本", Line: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("mlops.env", []byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if f.Source != "mlops.env" {
				t.Errorf("Source = %q", f.Source)
			}
			if diff := cmp.Diff(tt.want, f.Entries); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const (
		rule    = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"
		repeat  = ": kustomize's configMapGenerator rejects a repeated key; keep one"
		badUTF8 = ": invalid UTF-8: an env file must be UTF-8 text"
		tooLong = ": line is longer than 65536 bytes: kustomize silently drops it and every line after it; accepted: shorter lines"
	)
	long := strings.Repeat("x", 70000)
	tests := []struct {
		name  string
		in    string
		lines []int
		want  []string // one message per bad line, in line order
	}{
		{
			name:  "key starts with a digit",
			in:    "# c\nA=1\n\n9WORKERS=2\n",
			lines: []int{4},
			want:  []string{`mlops.env:4: "9WORKERS=2": "9WORKERS" is not a valid key: ` + rule},
		},
		{
			name:  "space in key",
			in:    "MY KEY=1\n",
			lines: []int{1},
			want:  []string{`mlops.env:1: "MY KEY=1": "MY KEY" is not a valid key: ` + rule},
		},
		{
			name:  "shell export",
			in:    "export A=1\n",
			lines: []int{1},
			want:  []string{`mlops.env:1: "export A=1": "export A" is not a valid key: ` + rule},
		},
		{
			name:  "space before =",
			in:    "  WORKERS =2\n",
			lines: []int{1},
			want:  []string{`mlops.env:1: "  WORKERS =2": "WORKERS " is not a valid key: remove the whitespace before "="; ` + rule},
		},
		{
			name:  "bare invalid key",
			in:    "A\nB C\n",
			lines: []int{2},
			want:  []string{`mlops.env:2: "B C": "B C" is not a valid key: ` + rule},
		},
		{
			name:  "empty key",
			in:    "A=1\n=2\n",
			lines: []int{2},
			want:  []string{`mlops.env:2: "=2": the line has no key before "="; accepted: KEY=value`},
		},
		{
			name:  "key starting with ..",
			in:    "..A=1\n",
			lines: []int{1},
			want:  []string{`mlops.env:1: "..A=1": "..A" is not a valid key: it must not be '.' or start with '..'`},
		},
		{
			name:  "BOM on a later line is not dropped",
			in:    "A=1\n\ufeffB=2\n",
			lines: []int{2},
			want:  []string{`mlops.env:2: "\ufeffB=2": "\ufeffB" is not a valid key: ` + rule},
		},
		{
			name:  "repeated key names both lines",
			in:    "A=1\nB=2\n  A=3\n",
			lines: []int{3},
			want:  []string{`mlops.env:3: "  A=3": key A repeats line 1` + repeat},
		},
		{
			name:  "repeated bare key",
			in:    "A\nA=1\n",
			lines: []int{2},
			want:  []string{`mlops.env:2: "A=1": key A repeats line 1` + repeat},
		},
		{
			name:  "invalid UTF-8",
			in:    "A=1\nB=\xff\n",
			lines: []int{2},
			want:  []string{`mlops.env:2: "B=\xff"` + badUTF8},
		},
		{
			name:  "invalid UTF-8 in a comment",
			in:    "# \xfe\n",
			lines: []int{1},
			want:  []string{`mlops.env:1: "# \xfe"` + badUTF8},
		},
		{
			name:  "line too long",
			in:    "A=1\nB=" + long + "\nC=3\n",
			lines: []int{2},
			want:  []string{`mlops.env:2: "B=` + long[:38] + `..."` + tooLong},
		},

		// Several bad lines: every one is reported, in line order.
		{
			name:  "every kind at once",
			in:    "9A=1\nB=\xff\nC=1\nMY KEY=2\n\nC=2\nD=ok\n=x\n",
			lines: []int{1, 2, 4, 6, 8},
			want: []string{
				`mlops.env:1: "9A=1": "9A" is not a valid key: ` + rule,
				`mlops.env:2: "B=\xff"` + badUTF8,
				`mlops.env:4: "MY KEY=2": "MY KEY" is not a valid key: ` + rule,
				`mlops.env:6: "C=2": key C repeats line 3` + repeat,
				`mlops.env:8: "=x": the line has no key before "="; accepted: KEY=value`,
			},
		},
		{
			name:  "a key repeated twice names its first line both times",
			in:    "A=1\nA=2\nA=3\n",
			lines: []int{2, 3},
			want: []string{
				`mlops.env:2: "A=2": key A repeats line 1` + repeat,
				`mlops.env:3: "A=3": key A repeats line 1` + repeat,
			},
		},
		{
			name:  "a rejected line does not claim its key",
			in:    "A=\xff\nA=1\nB C=1\nB C=2\n",
			lines: []int{1, 3, 4},
			want: []string{
				`mlops.env:1: "A=\xff"` + badUTF8,
				`mlops.env:3: "B C=1": "B C" is not a valid key: ` + rule,
				`mlops.env:4: "B C=2": "B C" is not a valid key: ` + rule,
			},
		},
		{
			name:  "an over-long line ends the report",
			in:    "1=a\nA=1\nA=2\nB=" + long + "\n2=b\n",
			lines: []int{1, 3, 4},
			want: []string{
				`mlops.env:1: "1=a": "1" is not a valid key: ` + rule,
				`mlops.env:3: "A=2": key A repeats line 2` + repeat,
				`mlops.env:4: "B=` + long[:38] + `..."` + tooLong,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("mlops.env", []byte(tt.in))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", f.Entries)
			}
			if f != nil {
				t.Errorf("Parse returned a File with its error: %+v", f)
			}
			var pes ParseErrors
			if !errors.As(err, &pes) {
				t.Fatalf("error %T is not a ParseErrors", err)
			}
			var lines []int
			for _, pe := range pes {
				lines = append(lines, pe.Line)
				if pe.Source != "mlops.env" {
					t.Errorf("line %d: Source = %q", pe.Line, pe.Source)
				}
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error lines (-want +got):\n%s", diff)
			}
			// Callers that look for one *ParseError get the first bad line.
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("errors.As(%T, *ParseError) = false", err)
			}
			if pe != pes[0] {
				t.Errorf("errors.As found line %d, want the first, line %d", pe.Line, pes[0].Line)
			}
		})
	}
}

func TestParseErrorsType(t *testing.T) {
	a := &ParseError{Source: "f", Line: 1, Text: "9=x", Reason: "bad"}
	b := &ParseError{Source: "f", Line: 3, Text: "A=2", Reason: "repeat"}
	tests := []struct {
		name    string
		errs    ParseErrors
		message string
		first   *ParseError
	}{
		{name: "none", errs: ParseErrors{}, message: ""},
		{name: "one", errs: ParseErrors{a}, message: `f:1: "9=x": bad`, first: a},
		{name: "two", errs: ParseErrors{a, b}, message: "f:1: \"9=x\": bad\nf:3: \"A=2\": repeat", first: a},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error = tt.errs
			if got := err.Error(); got != tt.message {
				t.Errorf("Error() = %q, want %q", got, tt.message)
			}
			if got := tt.errs.Unwrap(); len(got) != len(tt.errs) {
				t.Errorf("Unwrap() = %v, want %d errors", got, len(tt.errs))
			}
			var pe *ParseError
			if found := errors.As(err, &pe); found != (tt.first != nil) || pe != tt.first {
				t.Errorf("errors.As = %v, %v; want %v", found, pe, tt.first)
			}
			for _, e := range tt.errs {
				if !errors.Is(err, e) {
					t.Errorf("errors.Is(err, line %d) = false", e.Line)
				}
			}
			// Wrapped, as callers pass it on.
			wrapped := fmt.Errorf("loading: %w", err)
			var pes ParseErrors
			if !errors.As(wrapped, &pes) || len(pes) != len(tt.errs) {
				t.Errorf("errors.As(wrapped, ParseErrors) = %v", pes)
			}
		})
	}
}

func TestFromMapLookupMap(t *testing.T) {
	data := map[string]string{"WORKERS": "2", "CPU": "4", "EXTRA": ""}
	f := FromMap("ConfigMap/mlops-env", data)
	want := &File{Source: "ConfigMap/mlops-env", Entries: []Entry{
		{Key: "CPU", Value: "4"}, {Key: "EXTRA", Value: ""}, {Key: "WORKERS", Value: "2"},
	}}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("FromMap (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(data, f.Map()); diff != "" {
		t.Errorf("Map (-want +got):\n%s", diff)
	}
	if e, ok := f.Lookup("EXTRA"); !ok || e != (Entry{Key: "EXTRA"}) {
		t.Errorf("Lookup(EXTRA) = %+v, %v", e, ok)
	}
	if e, ok := f.Lookup("MISSING"); ok {
		t.Errorf("Lookup(MISSING) = %+v, true", e)
	}
}

func TestParseLookup(t *testing.T) {
	f, err := Parse("mlops.env", []byte("A=1\n# c\nB=x=y \n"))
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := f.Lookup("B"); !ok || e != (Entry{Key: "B", Value: "x=y ", Line: 3}) {
		t.Errorf("Lookup(B) = %+v, %v", e, ok)
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "B": "x=y "}, f.Map()); diff != "" {
		t.Errorf("Map (-want +got):\n%s", diff)
	}
}

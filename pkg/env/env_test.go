package env

import (
	"errors"
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
	const rule = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"
	long := strings.Repeat("x", 70000)
	tests := []struct {
		name string
		in   string
		line int
		want string
	}{
		{
			name: "key starts with a digit",
			in:   "# c\nA=1\n\n9WORKERS=2\n",
			line: 4,
			want: `mlops.env:4: "9WORKERS=2": "9WORKERS" is not a valid key: ` + rule,
		},
		{
			name: "space in key",
			in:   "MY KEY=1\n",
			line: 1,
			want: `mlops.env:1: "MY KEY=1": "MY KEY" is not a valid key: ` + rule,
		},
		{
			name: "shell export",
			in:   "export A=1\n",
			line: 1,
			want: `mlops.env:1: "export A=1": "export A" is not a valid key: ` + rule,
		},
		{
			name: "space before =",
			in:   "  WORKERS =2\n",
			line: 1,
			want: `mlops.env:1: "  WORKERS =2": "WORKERS " is not a valid key: remove the whitespace before "="; ` + rule,
		},
		{
			name: "bare invalid key",
			in:   "A\nB C\n",
			line: 2,
			want: `mlops.env:2: "B C": "B C" is not a valid key: ` + rule,
		},
		{
			name: "empty key",
			in:   "A=1\n=2\n",
			line: 2,
			want: `mlops.env:2: "=2": the line has no key before "="; accepted: KEY=value`,
		},
		{
			name: "key starting with ..",
			in:   "..A=1\n",
			line: 1,
			want: `mlops.env:1: "..A=1": "..A" is not a valid key: it must not be '.' or start with '..'`,
		},
		{
			name: "BOM on a later line is not dropped",
			in:   "A=1\n\ufeffB=2\n",
			line: 2,
			want: `mlops.env:2: "\ufeffB=2": "\ufeffB" is not a valid key: ` + rule,
		},
		{
			name: "repeated key names both lines",
			in:   "A=1\nB=2\n  A=3\n",
			line: 3,
			want: `mlops.env:3: "  A=3": key A repeats line 1: kustomize's configMapGenerator rejects a repeated key; keep one`,
		},
		{
			name: "repeated bare key",
			in:   "A\nA=1\n",
			line: 2,
			want: `mlops.env:2: "A=1": key A repeats line 1: kustomize's configMapGenerator rejects a repeated key; keep one`,
		},
		{
			name: "invalid UTF-8",
			in:   "A=1\nB=\xff\n",
			line: 2,
			want: `mlops.env:2: "B=\xff": invalid UTF-8: an env file must be UTF-8 text`,
		},
		{
			name: "invalid UTF-8 in a comment",
			in:   "# \xfe\n",
			line: 1,
			want: `mlops.env:1: "# \xfe": invalid UTF-8: an env file must be UTF-8 text`,
		},
		{
			name: "line too long",
			in:   "A=1\nB=" + long + "\nC=3\n",
			line: 2,
			want: `mlops.env:2: "B=` + long[:38] + `...": line is longer than 65536 bytes: kustomize silently drops it and every line after it; accepted: shorter lines`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("mlops.env", []byte(tt.in))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", f.Entries)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Source != "mlops.env" || pe.Line != tt.line {
				t.Errorf("Source, Line = %q, %d; want mlops.env, %d", pe.Source, pe.Line, tt.line)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got %s\nwant %s", got, tt.want)
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

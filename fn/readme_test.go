package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/env"
)

// TestDocsAreComplete keeps the reference tables in docs/ in step with the
// code: every mlops.env key has a row, every golden error case is in the
// error catalogue, and every case the catalogue names exists.
func TestDocsAreComplete(t *testing.T) {
	keys := readDoc(t, "mlops-env.md")
	for _, k := range env.KnownKeys() {
		if !strings.Contains(keys, "| `"+k.Key+"` |") {
			t.Errorf("docs/mlops-env.md: the mlops.env table has no row for %s", k.Key)
		}
	}
	catalogue := readDoc(t, "errors.md")
	cases, _ := filepath.Glob("../testdata/error-*")
	if len(cases) == 0 {
		t.Fatal("no error cases under ../testdata")
	}
	for _, c := range cases {
		if name := filepath.Base(c); !strings.Contains(catalogue, "`"+name+"`") {
			t.Errorf("docs/errors.md: the error catalogue does not list the golden case %s", name)
		}
	}
	for _, field := range strings.Split(catalogue, "`") {
		if strings.HasPrefix(field, "error-") {
			if _, err := os.Stat(filepath.Join("../testdata", field)); err != nil {
				t.Errorf("docs/errors.md: the error catalogue names %s, which is not a golden case", field)
			}
		}
	}
	for _, row := range catalogueRow.FindAllStringSubmatch(catalogue, -1) {
		if want := catalogueMessage(t, row[2]); row[1] != want {
			t.Errorf("docs/errors.md: the row of %s says\n  %s\nbut its stderr.txt says\n  %s", row[2], row[1], want)
		}
	}
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../docs", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// catalogueRow is a row of the error catalogue: | input | `message` | `case` |.
var catalogueRow = regexp.MustCompile("(?m)^\\| .*? \\| `(.*?)` \\| `(error-[^`]+)` \\|$")

// catalogueMessage is what the catalogue shows of a case: its first error
// line without the prefix and the case's folder, backquotes as quotes (the
// table sets it in code), cut to 150 characters.
func catalogueMessage(t *testing.T, name string) string {
	data, err := os.ReadFile(filepath.Join("../testdata", name, "stderr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if msg, ok := strings.CutPrefix(line, "mlops-fn: error: "); ok {
			msg = strings.ReplaceAll(strings.ReplaceAll(msg, "testdata/"+name+"/", ""), "`", "'")
			if r := []rune(msg); len(r) > 150 {
				msg = string(r[:147]) + "…"
			}
			return msg
		}
	}
	t.Fatalf("%s/stderr.txt has no error line", name)
	return ""
}

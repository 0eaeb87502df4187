package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mlops-fn/mlops-fn/pkg/env"
)

// TestREADMEIsComplete keeps the README's reference tables in step with the
// code: every mlops.env key has a row, every golden error case is in the
// error catalogue, and every case the catalogue names exists.
func TestREADMEIsComplete(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	for _, k := range env.KnownKeys() {
		if !strings.Contains(readme, "| `"+k.Key+"` |") {
			t.Errorf("README: the mlops.env table has no row for %s", k.Key)
		}
	}
	cases, _ := filepath.Glob("../testdata/error-*")
	if len(cases) == 0 {
		t.Fatal("no error cases under ../testdata")
	}
	for _, c := range cases {
		if name := filepath.Base(c); !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("README: the error catalogue does not list the golden case %s", name)
		}
	}
	_, catalogue, _ := strings.Cut(readme, "## Errors")
	catalogue, _, _ = strings.Cut(catalogue, "\n## ")
	for _, field := range strings.Split(catalogue, "`") {
		if strings.HasPrefix(field, "error-") {
			if _, err := os.Stat(filepath.Join("../testdata", field)); err != nil {
				t.Errorf("README: the error catalogue names %s, which is not a golden case", field)
			}
		}
	}
	for _, row := range catalogueRow.FindAllStringSubmatch(catalogue, -1) {
		if want := catalogueMessage(t, row[2]); row[1] != want {
			t.Errorf("README: the row of %s says\n  %s\nbut its stderr.txt says\n  %s", row[2], row[1], want)
		}
	}
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

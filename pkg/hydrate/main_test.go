package hydrate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fnBinary is mlops-fn built from this tree: hydrate checks its overlays
// against it, run as kustomize runs an exec function.
var fnBinary string

func TestMain(m *testing.M) {
	if at := os.Getenv(killAtVariable); at != "" {
		os.Exit(hydrateAndDie(at))
	}
	dir, err := os.MkdirTemp("", "mlops-fn-hydrate-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fnBinary = filepath.Join(dir, "mlops-fn")
	if out, err := exec.Command("go", "build", "-o", fnBinary, "../../fn").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building mlops-fn for the tests: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

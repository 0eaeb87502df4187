// SPDX-License-Identifier: Apache-2.0

// Package version says which mlops-fn a binary is, from Go's build info: the
// module version (a release tag, a pseudo-version, or (devel)), the commit and
// whether its tree was modified. Both programs print it: the full command's
// `version` and --version, the image's --version.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// String reads the running binary's build info.
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = &debug.BuildInfo{GoVersion: runtime.Version()}
	}
	return Format(bi, runtime.GOOS+"/"+runtime.GOARCH)
}

// Format says what bi records of a build for platform. `go install
// …@v0.1.0` records the module version and no commit (the version names
// it); a build in a clone records the commit with -buildvcs (Go's default,
// and the release's), and then a version from the tag it sits on, or a
// pseudo-version, "+dirty" when the tree was modified.
func Format(bi *debug.BuildInfo, platform string) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		if k, ok := strings.CutPrefix(s.Key, "vcs."); ok {
			vcs[k] = s.Value
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mlops-fn %s\n", v)
	if rev := vcs["revision"]; rev != "" {
		fmt.Fprintf(&b, "commit:   %s %s\n", rev, vcs["time"])
		fmt.Fprintf(&b, "modified: %s\n", vcs["modified"])
	} else {
		fmt.Fprintf(&b, "commit:   not recorded (built from a module, or with -buildvcs=false)\n")
	}
	if bi.Path != "" {
		fmt.Fprintf(&b, "package:  %s\n", bi.Path)
	}
	fmt.Fprintf(&b, "go:       %s %s\n", bi.GoVersion, platform)
	return b.String()
}

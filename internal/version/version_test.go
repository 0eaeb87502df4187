// SPDX-License-Identifier: Apache-2.0

package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFormat(t *testing.T) {
	for name, tc := range map[string]struct {
		bi   debug.BuildInfo
		want string
	}{
		"a release built from its tag": {
			bi: debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/mlops-fn/mlops-fn/fn/mlops-fn",
				Main: debug.Module{Version: "v0.1.0"},
				Settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "vcs", Value: "git"},
					{Key: "vcs.revision", Value: "2d77f6d"}, {Key: "vcs.time", Value: "2026-11-28T04:46:55Z"}, {Key: "vcs.modified", Value: "false"}}},
			want: "mlops-fn v0.1.0\ncommit:   2d77f6d 2026-11-28T04:46:55Z\nmodified: false\npackage:  github.com/mlops-fn/mlops-fn/fn/mlops-fn\ngo:       go1.26.8 linux/arm64\n",
		},
		"go install of the module": {
			bi:   debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/mlops-fn/mlops-fn/krm", Main: debug.Module{Version: "v0.1.0"}},
			want: "mlops-fn v0.1.0\ncommit:   not recorded (built from a module, or with -buildvcs=false)\npackage:  github.com/mlops-fn/mlops-fn/krm\ngo:       go1.26.8 linux/arm64\n",
		},
		"go run with -buildvcs=false": {
			bi:   debug.BuildInfo{GoVersion: "go1.26.8", Path: "command-line-arguments", Main: debug.Module{Version: "(devel)"}},
			want: "mlops-fn (devel)\ncommit:   not recorded (built from a module, or with -buildvcs=false)\npackage:  command-line-arguments\ngo:       go1.26.8 linux/arm64\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Format(&tc.bi, "linux/arm64")); diff != "" {
				t.Error(diff)
			}
		})
	}
}

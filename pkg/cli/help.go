// SPDX-License-Identifier: Apache-2.0

package cli

import "github.com/mlops-fn/mlops-fn/pkg/krm"

// help is the --help text, the image's too (pkg/krm).
func help() string { return krm.Help() }

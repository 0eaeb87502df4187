// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
	"github.com/mlops-fn/mlops-fn/pkg/env"
)

// reference is ${KEY} or ${KEY:-default}, or the same escaped by a second $ for a shell: $${HOSTNAME}.
var reference = regexp.MustCompile(`\$?\$\{([^}]*)\}`)

var keyName = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)

// expander substitutes ${KEY} with mlops.env values and collects the references to keys the file lacks.
type expander struct {
	values map[string]string
	source string
	errs   field.ErrorList
}

// unclosed is a ${ that no } closes, or the same escaped.
var unclosed = regexp.MustCompile(`\$?\$\{[^}]*$`)

func (x *expander) str(p *field.Path, s string) string {
	if at := unclosed.FindStringIndex(s); at != nil {
		text := s[at[0]:]
		if strings.HasPrefix(text, "$$") {
			return x.str(p, s[:at[0]]) + text[1:]
		}
		x.errs = append(x.errs, field.Invalid(p, s, fmt.Sprintf("%s has no closing }; accepted: ${KEY} or ${KEY:-default} for a key of %s, or $%s for the text %s", text, x.source, text, text)))
		return s
	}
	return reference.ReplaceAllStringFunc(s, func(ref string) string {
		if strings.HasPrefix(ref, "$$") {
			return ref[1:]
		}
		inner := ref[2 : len(ref)-1]
		key, fallback, hasDefault := strings.Cut(inner, ":-")
		if !keyName.MatchString(key) {
			msg := fmt.Sprintf("%s is not a reference mlops-fn expands; accepted: ${KEY} or ${KEY:-default} for a key of %s", ref, x.source)
			if key != "" {
				msg += fmt.Sprintf(", or $%s for the text %s (a shell expands it at run time)", ref, ref)
			}
			x.errs = append(x.errs, field.Invalid(p, s, msg))
			return ref
		}
		v, ok := x.values[key]
		switch {
		case hasDefault && !ok && !env.IsKnownKey(key):
			// Most likely a variable of the container's shell (${LOCAL_RANK:-0}): a default put in now would
			// be every rank's value.
			x.errs = append(x.errs, field.Invalid(p, s, fmt.Sprintf("references %s, but %s is neither in %s nor a key mlops-fn knows, so mlops-fn would write %q in now, for every pod; accepted: $%s for the shell to expand at run time, or %s in %s", ref, key, x.source, fallback, ref, key, x.source)))
			return ref
		case hasDefault && (!ok || v == ""):
			return fallback
		case !ok:
			msg := fmt.Sprintf("references ${%s}, which %s does not define", key, x.source)
			if near := env.Closest(key, slices.Collect(maps.Keys(x.values))); near != "" {
				msg += fmt.Sprintf(": did you mean ${%s}?", near)
			} else {
				msg += fmt.Sprintf("; accepted: a key of %s, or $${%s} for the text ${%s} (a shell expands it at run time)", x.source, key, key)
			}
			x.errs = append(x.errs, field.Invalid(p, s, msg))
		}
		return v
	})
}

func (x *expander) strs(p *field.Path, in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = x.str(p.Index(i), s)
	}
	return out
}

// path expands s and checks it is an absolute path, which it returns cleaned; ok is false on an error.
func (x *expander) path(p *field.Path, s string) (string, bool) {
	before := len(x.errs)
	v := x.str(p, s)
	if len(x.errs) > before {
		return v, false
	}
	if msg := api.CheckAbsPath(v); msg != "" {
		x.errs = append(x.errs, field.Invalid(p, v, msg))
		return v, false
	}
	return path.Clean(v), true
}

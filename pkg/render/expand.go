package render

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

var reference = regexp.MustCompile(`\$\{([^}]*)\}`)

// expander substitutes ${KEY} with mlops.env values and collects the
// references to keys the file does not define.
type expander struct {
	values map[string]string
	source string
	errs   field.ErrorList
}

func (x *expander) str(p *field.Path, s string) string {
	return reference.ReplaceAllStringFunc(s, func(ref string) string {
		key := ref[2 : len(ref)-1]
		v, ok := x.values[key]
		if !ok {
			x.errs = append(x.errs, field.Invalid(p, s,
				fmt.Sprintf("references ${%s}, which %s does not define; accepted: a key of %s", key, x.source, x.source)))
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

// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlops-fn/mlops-fn/pkg/jobkind"
)

// notCarried refuses each field set that the spec's jobKind cannot carry (jobkind.Table.Fields).
func (s *MLOpsJobSpec) notCarried(p *field.Path, kinds jobkind.Table) field.ErrorList {
	k := kinds.Of(s.JobKind)
	if k.Kind == "" {
		return nil // an unknown jobKind, refused as such
	}
	var errs field.ErrorList
	for _, f := range kinds.Fields() {
		if k.CarriesField(f.Path) || !s.sets(f.Path) {
			continue
		}
		names := strings.Split(f.Path, ".")
		fp := p.Child(names[0], names[1:]...)
		carriers := slices.DeleteFunc(slices.Clone(kinds), func(k jobkind.Facts) bool { return !k.CarriesField(f.Path) })
		errs = append(errs, field.Forbidden(fp, fmt.Sprintf("jobKind %s cannot carry it (%s); accepted: no %s, or jobKind %s",
			s.JobKind, f.Why, fp, carriers.Sentence("or", func(k jobkind.Facts) string { return k.Kind }))))
	}
	return errs
}

// sets says whether the spec sets the field at path (dotted JSON names) to other than its zero. A path naming
// no field is a kind's mistake, which any test validating the kinds catches.
func (s *MLOpsJobSpec) sets(path string) bool {
	v := reflect.ValueOf(*s)
	for _, name := range strings.Split(path, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return false
			}
			v = v.Elem()
		}
		f, ok := v.Type().FieldByNameFunc(func(goName string) bool {
			f, _ := v.Type().FieldByName(goName)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			return tag == name
		})
		if !ok {
			panic("the kinds' table of fields names spec." + path + ", which the spec has not")
		}
		v = v.FieldByIndex(f.Index)
	}
	return !v.IsZero()
}

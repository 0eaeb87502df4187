// SPDX-License-Identifier: Apache-2.0

// Package fielddiff lists where two decoded YAML or JSON trees differ, leaf by leaf, each by its path with
// both values: what a message about two versions of an object names, where a text diff would show bytes.
package fielddiff

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Change is one path where the trees differ. Old or New is nil where that tree has nothing.
type Change struct {
	Path     string
	Old, New any
}

// Trees lists the changes from a to b, maps by sorted key and lists item by item, each path under root
// ("spec.replicas", "data.WORKERS", "containers[0].image", `labels["app.kubernetes.io/name"]`); none if equal.
func Trees(root string, a, b any) []Change {
	var out []Change
	walk(root, a, b, &out)
	return out
}

func walk(path string, a, b any, out *[]Change) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := slices.AppendSeq(slices.Collect(maps.Keys(am)), maps.Keys(bm))
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			walk(Join(path, k), am[k], bm[k], out)
		}
		return
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList {
		for i := range max(len(al), len(bl)) {
			walk(fmt.Sprintf("%s[%d]", path, i), item(al, i), item(bl, i), out)
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, Change{Path: path, Old: a, New: b})
	}
}

// Join is the path of key in the map at path: after a dot, or, for a key a dot would make ambiguous (a
// label's kueue.x-k8s.io/queue-name), quoted in brackets.
func Join(path, key string) string {
	if key == "" || strings.IndexFunc(key, func(r rune) bool {
		return r != '-' && r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) >= 0 {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func item(list []any, i int) any {
	if i < len(list) {
		return list[i]
	}
	return nil
}

// Brief writes a value for a message: as JSON (so "2" and 2 differ), cut at 200 bytes; nothing is "(none)".
func Brief(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return strings.ToValidUTF8(string(b[:197]), "") + "…" // a character cut in two is dropped: JSON is valid UTF-8
	}
	return string(b)
}

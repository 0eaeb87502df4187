// SPDX-License-Identifier: Apache-2.0

package jobspec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// Read reads a job spec file, which holds exactly one YAML document.
func Read(path string) (*yaml.RNode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

func Parse(path string, data []byte) (*yaml.RNode, error) {
	want := fmt.Sprintf("one %s (apiVersion %s)", api.Kind, api.APIVersion)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s is empty; accepted: %s", path, want)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			msg := oneLine(err.Error())
			if unquotedReference(data, msg) {
				msg += ` (a ${KEY} inside a flow list [a, ${KEY}] must be quoted: "${KEY}")`
			}
			return nil, fmt.Errorf("%s: %s", path, msg)
		}
		if !emptyDocument(&n) { // a trailing "---", or one before comments only: kustomize and kubectl skip those too
			docs = append(docs, &n)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s holds no YAML document, only separators or comments; accepted: %s", path, want)
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s holds %d YAML documents; accepted: %s", path, len(docs), want)
	}
	return yaml.NewRNode(docs[0]), nil
}

// emptyDocument: a document that holds no node, or only an empty null.
func emptyDocument(n *yaml.Node) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return n.Kind == 0 || n.Kind == yaml.DocumentNode && len(n.Content) == 0 ||
		n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == ""
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): did not find expected ',' or ']'`)

// unquotedReference: a YAML error points at a flow list holding ${KEY}, which YAML reads as a map.
func unquotedReference(data []byte, msg string) bool {
	m := yamlErrorLine.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	lines := strings.Split(string(data), "\n")
	// The parser reports the line before the flow list as often as the list's own.
	for i := n - 1; i <= n && i < len(lines); i++ {
		if i >= 0 && strings.Contains(lines[i], "[") && strings.Contains(lines[i], "${") {
			return true
		}
	}
	return false
}

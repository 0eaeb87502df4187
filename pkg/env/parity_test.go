// SPDX-License-Identifier: Apache-2.0

package env

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

const parityKustomization = `configMapGenerator:
- name: mlops-env
  envs: [mlops.env]
  options: {disableNameSuffixHash: true}
`

// kustomizeData runs the real kustomize on envFile and returns the generated
// ConfigMap's data.
func kustomizeData(t *testing.T, envFile string) (map[string]string, error) {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for name, content := range map[string]string{"kustomization.yaml": parityKustomization, "mlops.env": envFile} {
		if err := fs.WriteFile("/app/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/app")
	if err != nil {
		return nil, err
	}
	if m.Size() != 1 {
		t.Fatalf("kustomize made %d resources, want 1", m.Size())
	}
	r := m.Resources()[0]
	if bin := r.GetBinaryDataMap(); len(bin) > 0 {
		t.Fatalf("kustomize made binaryData %v", bin)
	}
	return r.GetDataMap(), nil
}

// TestKustomizeParity checks Parse against kustomize itself: the same data
// when both accept, and a rejection whenever kustomize rejects. The stricter
// cases are where kustomize v5.8 accepts a file but makes a ConfigMap that
// cannot work (a key that is no environment variable name) or silently loses
// lines; they pin that difference so a kustomize upgrade that changes it shows up.
func TestKustomizeParity(t *testing.T) {
	agree := []string{
		"",
		"# only a comment\n",
		"WORKERS=2\nCPU=4\nMEMORY=8Gi\n",
		"# c\n\n   # indented\n\tA=1\n  B=2\n",
		"A=1  \nB=  x\t\n",
		"A=b=c\nB==\nC=\n",
		"A\nB=2\nC\n",
		"Q=\"quoted\"\nS='single'\nM=\"mixed'\n",
		"N=null\nT=~\nY=yes\nO=on\nH=0x10\nF=1e3\nK=a: b\nP=#x\nL=[1]\nD={a: 1}\nX=-\nZ=|\n",
		"A=1 # not a comment\n",
		"A=1\r\nB=2\r\n",
		"A=1\r\r\n",
		"A=x\rB=y\n",
		"\ufeffA=1\n",
		"\ufeff# c\nA=1\n",
		"\u00a0A=1\n\u2003B=2\n",
		"A=1\nB=2",
		"NAME=naïve 日本\n",
		"my.key-1=x\n_=y\n-=z\n.a=w\n",
		"A=" + strings.Repeat("v", 60000) + "\n",
	}
	bothReject := []string{
		"A=1\nB=\xff\n",
		"# \xfe\n",
		"A=1\nA=2\n",
		"\ufeffA=1\nA=2\n",
		"A\nA=1\n",
		// Parse reads on past a bad line; the file is still rejected.
		"A=1\nA=2\nB=\xff\nB=1\n",
		"9A=1\nA=\xff\n",
		"A=1\nA=2\nA=3\n",
	}
	stricter := []string{
		"9WORKERS=2\n",
		"MY KEY=1\n",
		"WORKERS =2\n",
		"export A=1\n",
		"A=1\n=2\n",
		"..A=1\n",
		"A=1\n\ufeffB=2\n",
		"A=1\nB=" + strings.Repeat("x", 70000) + "\nC=3\n",
		"9A=1\nMY KEY=2\n=3\nOK=4\n",
	}

	for _, in := range agree {
		t.Run("agree/"+caseName(in), func(t *testing.T) {
			want, err := kustomizeData(t, in)
			if err != nil {
				t.Fatalf("kustomize: %v", err)
			}
			f, err := Parse("mlops.env", []byte(in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(want, f.Map(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("data (-kustomize +Parse):\n%s", diff)
			}
		})
	}
	for _, in := range bothReject {
		t.Run("reject/"+caseName(in), func(t *testing.T) {
			if data, err := kustomizeData(t, in); err == nil {
				t.Fatalf("kustomize accepted it: %v", data)
			}
			if f, err := Parse("mlops.env", []byte(in)); err == nil {
				t.Fatalf("Parse accepted it: %+v", f.Entries)
			}
		})
	}
	for _, in := range stricter {
		t.Run("stricter/"+caseName(in), func(t *testing.T) {
			if _, err := kustomizeData(t, in); err != nil {
				t.Fatalf("kustomize now rejects it (%v): move the case to bothReject", err)
			}
			if f, err := Parse("mlops.env", []byte(in)); err == nil {
				t.Fatalf("Parse accepted it: %+v", f.Entries)
			}
		})
	}
}

// caseName makes a short subtest name of an env file.
func caseName(in string) string {
	const limit = 30
	if len(in) > limit {
		in = in[:limit]
	}
	return strings.ToValidUTF8(in, "?")
}

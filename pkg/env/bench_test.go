// SPDX-License-Identifier: Apache-2.0

package env

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkParseAndDecode(b *testing.B) {
	var text strings.Builder
	text.WriteString("# site\nREGISTRY=docker.io\nNFS_SERVER=nfs.example.internal\nNFS_PATH=/export/users\nNFS_MOUNT_PATH=/Users\nUSER_ID=1000\nGROUP_ID=1000\nWORKERS=4\nGPUS_PER_WORKER=2\nCPU=8\nMEMORY=32Gi\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&text, "EXTRA_%d=value %d\n", i, i)
	}
	data := []byte(text.String())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, err := Parse("mlops.env", data)
		if err != nil {
			b.Fatal(err)
		}
		Decode(f)
	}
}

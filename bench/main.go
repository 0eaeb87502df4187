// SPDX-License-Identifier: Apache-2.0

// Command bench measures what mlops-fn costs its users against the floor, a
// kyaml function that only passes its input through, built the same way and
// timed in the same run: `make bench`. It prints one table; ratios are what
// to read, absolute times on shared machines are noise. A second floor,
// bench/stackfloor, is the least a function on the upstream job types and
// kyaml's merge pays: what mlops-fn costs beyond its libraries.
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mlops-fn/mlops-fn/pkg/hydrate"
)

const (
	overlay  = "quickstart/k8s/mlops/multi-node"
	skeleton = "quickstart/common/tensorflow/k8s/mlops/multi-node/mpijob.yaml"
	runs     = 31
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	for _, b := range [][2]string{{"bin/mlops-fn", "./fn/mlops-fn"}, {"bin/mlops-fn-krm", "./krm"}, {"bin/floor", "./bench/floor"}, {"bin/stackfloor", "./bench/stackfloor"}} {
		if err := sh("", "env", "CGO_ENABLED=0", "go", "build", "-trimpath", "-ldflags=-s -w", "-o", b[0], b[1]); err != nil {
			return err
		}
	}
	fn, floor := abs("bin/mlops-fn"), abs("bin/floor")
	rl, err := resourceList(0)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "measure\tmlops-fn\tfloor\tratio\n")

	// 1. The quickstart, whole process.
	tf, tb, _, _ := compare(fn, floor, rl, runs)
	row(w, "quickstart ResourceList, median of "+fmt.Sprint(runs), tf, tb)

	// 1b. The same in instructions (medians of countRuns), which other load on the machine does not change.
	if _, err := exec.LookPath("valgrind"); err == nil {
		for _, b := range []struct{ name, bin string }{{"full command", fn}, {"KRM function", abs("bin/mlops-fn-krm")}} {
			nf, err := instructions(b.bin, rl)
			if err != nil {
				return err
			}
			nb, err := instructions(floor, rl)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "quickstart ResourceList, instructions (callgrind), %s\t%.1fM\t%.1fM\t%.2f\n", b.name, float64(nf)/1e6, float64(nb)/1e6, float64(nf)/float64(nb))
		}
		nk, err := instructions(abs("bin/mlops-fn-krm"), rl)
		if err != nil {
			return err
		}
		ns, err := instructions(abs("bin/stackfloor"), rl)
		if err != nil {
			return err
		}
		nb, err := instructions(floor, rl)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  the stack's floor (upstream types, one kyaml merge) vs the floor\t%.1fM\t%.1fM\t%.2f\n", float64(ns)/1e6, float64(nb)/1e6, float64(ns)/float64(nb))
		fmt.Fprintf(w, "  KRM function vs the stack's floor\t%.1fM\t%.1fM\t%.2f\n", float64(nk)/1e6, float64(ns)/1e6, float64(nk)/float64(ns))
		// The function turns its collector off for an input this small
		// (krm.CollectGarbageOnlyIfLarge); the floor's count above includes
		// its collector's work. Both without a collector: the work alone.
		nw, err := instructions(abs("bin/stackfloor"), rl, "GOGC=off")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  KRM function vs the stack's floor with GOGC=off (the work alone)\t%.1fM\t%.1fM\t%.2f\n", float64(nk)/1e6, float64(nw)/1e6, float64(nk)/float64(nw))
	} else {
		fmt.Fprintf(w, "quickstart ResourceList, instructions\tskipped: valgrind not on PATH\t\t\n")
	}

	// 2. Pass-through of unrelated items plus the job.
	perItem := map[int]time.Duration{}
	for _, n := range []int{1000, 10000, 50000} {
		rl, err := resourceList(n)
		if err != nil {
			return err
		}
		tf, tb, mf, mb := compare(fn, floor, rl, 5)
		row(w, fmt.Sprintf("%d items + job, median of 5", n), tf, tb)
		fmt.Fprintf(w, "  peak memory\t%d MB\t%d MB\t%.2f\n", mf/1024, mb/1024, float64(mf)/float64(mb))
		perItem[n] = tf / time.Duration(n)
	}
	fmt.Fprintf(w, "growth 10k -> 50k items (time per item, 1.00 = linear)\t%.2f\t\t\n", float64(perItem[50000])/float64(perItem[10000]))

	// 3. kustomize with the function vs. the hydrated overlay.
	if kustomize, err := exec.LookPath("kustomize"); err == nil {
		var withFn, hydrated []time.Duration
		for i := 0; i < 11; i++ {
			d, _, err := timed(kustomize, "build", "--enable-alpha-plugins", "--enable-exec", overlay+"/kustomize-exec")
			if err != nil {
				return err
			}
			withFn = append(withFn, d)
			d, _, err = timed(kustomize, "build", overlay)
			if err != nil {
				return err
			}
			hydrated = append(hydrated, d)
		}
		fmt.Fprintf(w, "kustomize build: exec function vs hydrated, median of 11\t%v\t%v\t%.2f\n", median(withFn), median(hydrated), ratio(median(withFn), median(hydrated)))
	} else {
		fmt.Fprintf(w, "kustomize build\tskipped: kustomize not on PATH\t\t\n")
	}

	// 4. The hydrated overlay's guard, and hydrate on a long spec.
	inputs := size(overlay+"/mlops.env") + size(overlay+"/job.yaml")
	guard, err := guardSize(overlay)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "quickstart guard vs its inputs (mlops.env + job.yaml)\t%.1f KB\t%.1f KB\t%.2f\n", kb(guard), kb(inputs), float64(guard)/float64(inputs))
	patches, _ := filepath.Glob(overlay + "/mlops-fn/*-patch.yaml")
	machinery := treeSize(overlay + "/mlops-fn")
	for _, p := range patches {
		machinery -= size(p)
	}
	fmt.Fprintf(w, "  its mlops-fn/ beside the job's patch vs the guard\t%.1f KB\t%.1f KB\t%.2f\n", kb(machinery), kb(guard), float64(machinery)/float64(guard))
	if err := longSpec(w, fn); err != nil {
		return err
	}

	// 5. Sizes.
	sf, sk, sb, ss := size(fn), size(abs("bin/mlops-fn-krm")), size(floor), size(abs("bin/stackfloor"))
	fmt.Fprintf(w, "binary size, full command (bin/mlops-fn)\t%.1f MB\t%.1f MB\t%.2f\n", mb(sf), mb(sb), float64(sf)/float64(sb))
	fmt.Fprintf(w, "binary size, KRM function (bin/mlops-fn-krm)\t%.1f MB\t%.1f MB\t%.2f\n", mb(sk), mb(sb), float64(sk)/float64(sb))
	fmt.Fprintf(w, "  the stack's floor (bin/stackfloor) vs the floor\t%.1f MB\t%.1f MB\t%.2f\n", mb(ss), mb(sb), float64(ss)/float64(sb))
	if err := exec.Command("docker", "info").Run(); err == nil {
		fi, err := image("bin/mlops-fn-krm", "localhost/mlops-fn:bench")
		if err != nil {
			return err
		}
		bi, err := image("bin/floor", "localhost/floor:bench")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "image size, uncompressed\t%.1f MB\t%.1f MB\t%.2f\n", mb(fi[0]), mb(bi[0]), float64(fi[0])/float64(bi[0]))
		fmt.Fprintf(w, "image size, gzip\t%.1f MB\t%.1f MB\t%.2f\n", mb(fi[1]), mb(bi[1]), float64(fi[1])/float64(bi[1]))
		si, err := image("bin/stackfloor", "localhost/stackfloor:bench")
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  the stack's floor, gzip, vs the floor\t%.1f MB\t%.1f MB\t%.2f\n", mb(si[1]), mb(bi[1]), float64(si[1])/float64(bi[1]))
	} else {
		fmt.Fprintf(w, "image size\tskipped: no Docker daemon\t\t\n")
	}
	if err := w.Flush(); err != nil {
		return err
	}

	// 6. The Go benchmarks of the hot paths.
	fmt.Println()
	return sh("", "go", "test", "-run", "^$", "-bench", ".", "-benchmem", "./pkg/...")
}

// longLines is the length of the long spec hydrate is timed on.
const longLines = 1500

// longSpec copies the quickstart, makes the multi-node job spec longLines
// lines long (environment variables of its own, two lines each), and prints
// hydrate's time on it against a plain `kustomize build` of the overlay it
// writes, run in turn (medians of 3), and the guard it writes, against the
// spec's size.
func longSpec(w io.Writer, fn string) error {
	tmp, err := os.MkdirTemp("", "bench-long-spec-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := sh("", "cp", "-r", "quickstart", tmp); err != nil {
		return err
	}
	dir := filepath.Join(tmp, overlay)
	spec, err := os.ReadFile(filepath.Join(dir, "job.yaml"))
	if err != nil {
		return err
	}
	text := strings.TrimRight(string(spec), "\n") + "\n  env:\n"
	for i := 0; strings.Count(text, "\n") < longLines; i++ {
		text += fmt.Sprintf("  - name: BENCH_%d\n    value: \"value of the variable number %d\"\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(text), 0o644); err != nil {
		return err
	}
	kustomize, _ := exec.LookPath("kustomize")
	var times, builds []time.Duration
	for i := 0; i < 3; i++ {
		d, _, err := timed(fn, "hydrate", dir)
		if err != nil {
			return err
		}
		times = append(times, d)
		if kustomize == "" {
			continue
		}
		if d, _, err = timed(kustomize, "build", dir); err != nil {
			return err
		}
		builds = append(builds, d)
	}
	lines := strings.Count(text, "\n")
	if kustomize == "" {
		fmt.Fprintf(w, "hydrate, %d-line spec, median of 3\t%v\tskipped: kustomize not on PATH\t\n", lines, median(times).Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "hydrate, %d-line spec, vs kustomize build of its output, median of 3\t%v\t%v\t%.2f\n", lines, median(times).Round(time.Millisecond), median(builds).Round(time.Millisecond), ratio(median(times), median(builds)))
	}
	guard, err := guardSize(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  its guard vs the spec (%.0f KB)\t%.1f KB\t%.1f KB\t%.2f\n", kb(int64(len(text))), kb(guard), kb(int64(len(text))), float64(guard)/float64(len(text)))
	return nil
}

// guardSize is the bytes of the guard in the overlay dir's component.
func guardSize(dir string) (int64, error) {
	k, err := os.ReadFile(filepath.Join(dir, hydrate.ComponentDir, "kustomization.yaml"))
	if err != nil {
		return 0, err
	}
	n, err := hydrate.GuardSize(k)
	return int64(n), err
}

// treeSize is the bytes of the files under dir.
func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n += size(p)
		}
		return nil
	})
	return n
}

func kb(n int64) float64 { return float64(n) / 1024 }

// resourceList is the input kustomize hands the function for the quickstart:
// the skeleton and the job spec, plus n unrelated ConfigMaps.
func resourceList(n int) ([]byte, error) {
	skel, err := os.ReadFile(skeleton)
	if err != nil {
		return nil, err
	}
	job, err := os.ReadFile(overlay + "/job.yaml")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	b.WriteString(indentItem(string(skel)))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: unrelated-%d\n    labels:\n      app: other\n  data:\n    key: value-%d\n", i, i)
	}
	b.WriteString("functionConfig:\n")
	for _, line := range strings.Split(strings.TrimSpace(string(job)), "\n") {
		b.WriteString("  " + line + "\n")
	}
	return b.Bytes(), nil
}

func indentItem(doc string) string {
	var b strings.Builder
	first := true
	for _, line := range strings.Split(strings.TrimSpace(doc), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if first {
			b.WriteString("- " + line + "\n")
			first = false
			continue
		}
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}

// compare runs the two binaries alternately on the same input, in the
// overlay's folder (where mlops.env is), and returns median times and peak RSS.
func compare(fn, floor string, input []byte, n int) (tf, tb time.Duration, mf, mb int64) {
	var df, db []time.Duration
	for i := 0; i < n; i++ {
		d, m, err := timedIn(overlay, fn, input)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		df, mf = append(df, d), max(mf, m)
		d, m, err = timedIn(overlay, floor, input)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		db, mb = append(db, d), max(mb, m)
	}
	return median(df), median(db), mf, mb
}

func timedIn(dir, bin string, input []byte) (time.Duration, int64, error) {
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: %v\n%s", bin, err, stderr.String())
	}
	return time.Since(start), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, nil
}

// callgrindTotal is callgrind's summary line of the instructions a run executed.
var callgrindTotal = regexp.MustCompile(`I\s+refs:\s+([0-9,]+)`)

// countRuns is how many runs an instruction count is the median of: a
// program whose collector runs (the floors) counts up to a tenth more or less
// from one run to the next, as its background marking goes.
const countRuns = 5

// instructions is the median of countRuns counts of what bin executes on
// input in the overlay's folder, with env added to its environment.
func instructions(bin string, input []byte, env ...string) (int64, error) {
	counts := make([]int64, countRuns)
	for i := range counts {
		n, err := instructionsOnce(bin, input, env)
		if err != nil {
			return 0, err
		}
		counts[i] = n
	}
	slices.Sort(counts)
	return counts[countRuns/2], nil
}

// instructionsOnce counts one run under valgrind's callgrind (Go's
// asynchronous preemption signals off: callgrind aborts on them).
func instructionsOnce(bin string, input []byte, env []string) (int64, error) {
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", bin)
	cmd.Dir = overlay
	cmd.Env = append(append(os.Environ(), "GODEBUG=asyncpreemptoff=1"), env...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("valgrind %s: %v\n%s", bin, err, stderr.String())
	}
	m := callgrindTotal.FindStringSubmatch(stderr.String())
	if m == nil {
		return 0, fmt.Errorf("valgrind %s: no instruction count in:\n%s", bin, stderr.String())
	}
	return strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
}

func timed(bin string, args ...string) (time.Duration, int64, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return time.Since(start), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss, nil
}

// image builds bin into an image with the repository's Dockerfile, in a
// context holding just that binary as mlops-fn-krm and the user files, and
// returns its uncompressed and gzip-compressed sizes.
func image(bin, tag string) ([2]int64, error) {
	ctx, err := os.MkdirTemp("", "bench-image-")
	if err != nil {
		return [2]int64{}, err
	}
	defer func() { _ = os.RemoveAll(ctx) }()
	for from, to := range map[string]string{"Dockerfile": "Dockerfile", bin: "mlops-fn-krm", "krm/etc/passwd": "krm/etc/passwd", "krm/etc/group": "krm/etc/group"} {
		data, err := os.ReadFile(from)
		if err != nil {
			return [2]int64{}, err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ctx, to)), 0o755); err != nil {
			return [2]int64{}, err
		}
		if err := os.WriteFile(filepath.Join(ctx, to), data, 0o755); err != nil {
			return [2]int64{}, err
		}
	}
	if err := sh("", "docker", "build", "-q", "-t", tag, ctx); err != nil {
		return [2]int64{}, err
	}
	out, err := exec.Command("docker", "image", "inspect", "-f", "{{.Size}}", tag).Output()
	if err != nil {
		return [2]int64{}, err
	}
	var raw int64
	if _, err := fmt.Sscan(string(out), &raw); err != nil {
		return [2]int64{}, err
	}
	save := exec.Command("docker", "save", tag)
	var tar bytes.Buffer
	save.Stdout = &tar
	if err := save.Run(); err != nil {
		return [2]int64{}, err
	}
	var gz countingWriter
	zw := gzip.NewWriter(&gz)
	if _, err := io.Copy(zw, &tar); err != nil {
		return [2]int64{}, err
	}
	if err := zw.Close(); err != nil {
		return [2]int64{}, err
	}
	return [2]int64{raw, int64(gz)}, nil
}

type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

func row(w io.Writer, name string, f, b time.Duration) {
	fmt.Fprintf(w, "%s\t%v\t%v\t%.2f\n", name, f.Round(100*time.Microsecond), b.Round(100*time.Microsecond), ratio(f, b))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

func size(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func abs(p string) string {
	a, _ := filepath.Abs(p)
	return a
}

func sh(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

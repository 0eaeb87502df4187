// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mlops-fn/mlops-fn/internal/testutil"
	api "github.com/mlops-fn/mlops-fn/pkg/api/v1alpha1"
)

// publishedOverlay writes what a user would for a published example: the example as the base,
// a job spec and mlops.env beside it, hydrated with mlops-fn hydrate --resources ../base. It
// returns the overlay folder.
func publishedOverlay(p testutil.PublishedJob, dir string) (string, error) {
	job, err := p.Read()
	if err != nil {
		return "", err
	}
	return overlayOver(filepath.Base(p.File), string(job), p.JobSpec(), p.Env, dir)
}

// overlayOver writes a base holding the user's job (file: its text) and an overlay with the job
// spec and mlops.env given, under dir, hydrates the overlay over the base as a user would
// (mlops-fn hydrate --resources ../base) and returns the overlay's folder.
func overlayOver(file, job, spec, env, dir string) (string, error) {
	for name, text := range map[string]string{
		"base/" + file:            job,
		"base/kustomization.yaml": "resources:\n- " + file + "\n",
		"overlay/job.yaml":        spec,
		"overlay/mlops.env":       env,
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	overlay := filepath.Join(dir, "overlay")
	if out, err := runMlopsFn("hydrate", "--resources", "../base", overlay); err != nil {
		return "", fmt.Errorf("mlops-fn hydrate: %v: %s", err, out)
	}
	return overlay, nil
}

// publishedSkip says why a published example cannot run here, "" when it can: the checks apply
// each job in a namespace of their own, and a queue label would leave it to Kueue (TestKueue).
func publishedSkip(p testutil.PublishedJob) string {
	switch {
	case strings.Contains(p.Spec, "namespace:"):
		return "its spec names a namespace, and the checks run each job in a fresh one"
	case strings.Contains(p.Spec, api.QueueLabel), strings.Contains(p.Env, "QUEUE="):
		return "its spec queues it (" + api.QueueLabel + "), and the Kueue checks are TestKueue's"
	}
	return ""
}

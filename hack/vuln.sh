#!/usr/bin/env bash
# make vuln: govulncheck against vuln.go.dev where it answers, else against the
# offline copy in ../shared/vulndb (unpacked to a temporary folder). A finding
# fails either way; so does having neither database.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v govulncheck >/dev/null || { echo "govulncheck not installed: go install golang.org/x/vuln/cmd/govulncheck@v1.1.4" >&2; exit 1; }
if curl -sf --max-time 10 -o /dev/null https://vuln.go.dev/index/db.json; then
  echo "govulncheck against vuln.go.dev"
  exec govulncheck ./...
fi
archive=$(ls ../shared/vulndb/go-vulndb-*.tar.gz 2>/dev/null | sort | tail -n 1 || true)
if [ -z "$archive" ]; then
  echo "vuln.go.dev does not answer and ../shared/vulndb holds no database: nothing to scan against" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$archive" -C "$tmp"
echo "vuln.go.dev does not answer: govulncheck against $(basename "$archive") (modified $(jq -r .modified "$tmp/db/index/db.json" 2>/dev/null || echo '?'))"
govulncheck -db "file://$tmp/db" ./...

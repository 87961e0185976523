#!/usr/bin/env bash
# make demo: copy the bundled example into a fresh git repository and let
# `setctl apply` take its spec to merged, tested commits with the replay agent.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
set_bin="$here/bin/setctl"
demo=$(mktemp -d "${TMPDIR:-/tmp}/set-demo.XXXXXX")

cp -R "$here/examples/linkshort/." "$demo/"
cd "$demo"
export GIT_AUTHOR_NAME="set demo" GIT_AUTHOR_EMAIL="demo@localhost"
export GIT_COMMITTER_NAME="set demo" GIT_COMMITTER_EMAIL="demo@localhost"
git init -q -b main
git add -A
git commit -q -m "linkshort: skeleton and spec"

echo "== setctl apply in $demo"
"$set_bin" apply --yes

echo
echo "== main after the run"
git log --oneline --graph main | head -40
echo
echo "== setctl plan: main implements the whole spec, nothing is left to plan"
"$set_bin" plan --detailed-exitcode
echo
echo "== go test ./... on main"
go test ./...
echo
echo "Look around: cd $demo"
echo "  git log --stat main          one commit per change, its OpenSpec fold included"
echo "  ls openspec/specs            the living specs: the record of what main implements"
echo "  less .set/events.jsonl       every event of the run"
echo "  ls .set/logs/*               agent and gate logs per change"
echo
echo "The run in a browser (its timeline, gates by round, requirements):"
echo "  cd $demo && $set_bin dashboard"

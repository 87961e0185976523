#!/bin/sh
# scripts/agent.sh CHANGE ITERATION PROMPT_FILE, run in the change's
# worktree: a stand-in for a coding agent given an OpenSpec change folder.
# It reads the requirements of the folder's delta specs, writes code for
# them and a test that names each by its title, and checks every task of
# tasks.md off. It never touches specs/ or .openspec.yaml.
set -e
change=$1
folder=openspec/changes/$change
# The prompt carries the folder's proposal, and its design when it has one.
grep -qF "$(sed -n 2p "$folder/proposal.md")" "$3"
if [ -f "$folder/design.md" ]; then
	grep -qF "$(sed -n 2p "$folder/design.md")" "$3"
fi
mkdir -p src tests
grep -h '^### Requirement: ' "$folder"/specs/*/spec.md | sed 's/^### Requirement: //' > "src/$change.txt"
{
	echo "# The test of $change."
	while read -r title; do
		echo "# $title"
		echo "grep -qx '$title' src/$change.txt"
	done < "src/$change.txt"
} > "tests/$change.sh"
sed 's/^\([[:space:]]*[-*+][[:space:]]*\)\[ \]/\1[x]/' "$folder/tasks.md" > "$folder/tasks.md.new"
mv "$folder/tasks.md.new" "$folder/tasks.md"

#!/usr/bin/env bash
# make bench: BenchmarkApply (engine/orchestrator) once per scenario of
# issue 16, each in a process of its own (so that its peak memory is its
# own), and the figures as a table. The raw `go test` output goes to
# bin/bench.txt. Figures, not a pass/fail test: nothing here fails on time.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
cd "$here"
mkdir -p bin
"$go" test -c -o bin/orchestrator.test ./engine/orchestrator/
out=bin/bench.txt
: >"$out"
for c in dag-50 dag-200 independent-20 independent-20-spec4; do
	# The machine's load as the case starts: walls are only comparable
	# between runs on a machine as quiet (CPU and git counts are steadier).
	load=$(uptime | sed 's/.*load averages*: *//; s/[, ].*//')
	echo "== BenchmarkApply/$c (load $load)" | tee -a "$out" >&2
	(cd engine/orchestrator && "$here/bin/orchestrator.test" -test.run '^$' \
		-test.bench "^BenchmarkApply\$/^$c\$" -test.benchtime 1x) | tee -a "$out" >&2
done
awk '
/^== BenchmarkApply\// { load = $NF; sub(/\)$/, "", load) }
/^BenchmarkApply\// {
	name = $1; sub(/^BenchmarkApply\//, "", name); sub(/-[0-9]+$/, "", name)
	for (i = 3; i < NF; i += 2) v[name, $(i + 1)] = $i
	names[++n] = name
	l[name] = load
}
END {
	printf "%-20s %8s %8s %8s %10s %9s %9s %9s %9s %8s %6s\n", "case", "wall s", "bound s", "wall/lb", "excess ms", "cpu ms", "child ms", "git", "git(set)", "rss MB", "load"
	printf "%-20s %8s %8s %8s %10s %9s %9s %9s %9s %8s %6s\n", "", "", "", "", "/change", "/change", "/change", "/change", "/change", "peak", "1 min"
	for (j = 1; j <= n; j++) {
		c = names[j]
		printf "%-20s %8.2f %8.2f %8.3f %10.1f %9.1f %9.1f %9.1f %9.1f %8.1f %6s\n", c,
			v[c, "wall-s"], v[c, "lower-bound-s"], v[c, "wall/lower-bound"], v[c, "excess-ms/change"],
			v[c, "cpu-ms/change"], v[c, "child-cpu-ms/change"], v[c, "git/change"], v[c, "git-top/change"], v[c, "peak-rss-MB"], l[c]
	}
}' "$out"

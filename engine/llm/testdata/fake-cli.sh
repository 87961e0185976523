#!/bin/sh
# fake-cli.sh stands in for the claude and codex CLIs in tests. Run n
# (1, 2, …) records its argv in $FAKE_DIR/args-n (NUL-separated) and, when
# it is given --output-schema FILE, a copy of FILE in $FAKE_DIR/schema-n;
# then it prints $FAKE_DIR/out-n and exits with the number in
# $FAKE_DIR/exit-n (0 when there is none).
n=1
while [ -e "$FAKE_DIR/args-$n" ]; do n=$((n + 1)); done
printf '%s\0' "$@" > "$FAKE_DIR/args-$n"
prev=
for a in "$@"; do
	if [ "$prev" = --output-schema ]; then cp "$a" "$FAKE_DIR/schema-$n"; fi
	prev=$a
done
cat "$FAKE_DIR/out-$n"
exit "$(cat "$FAKE_DIR/exit-$n" 2>/dev/null || echo 0)"

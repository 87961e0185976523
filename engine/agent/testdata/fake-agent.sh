#!/bin/sh
# fake-agent.sh stands in for the claude and codex CLIs in tests. It records
# what it was started with in $FAKE_DIR (args: NUL-separated argv; env;
# pwd; stdin: "devnull" when stdin is /dev/null), writes $FAKE_WRITE (a
# file of the worktree) when set, prints the recorded stream $FAKE_STREAM,
# then sleeps $FAKE_SLEEP seconds (a stall) and exits with $FAKE_EXIT.
printf '%s\0' "$@" > "$FAKE_DIR/args"
env > "$FAKE_DIR/env"
pwd > "$FAKE_DIR/pwd"
if [ "$(readlink /proc/self/fd/0 2>/dev/null || readlink /dev/fd/0)" = /dev/null ]; then
	echo devnull > "$FAKE_DIR/stdin"
else
	echo other > "$FAKE_DIR/stdin"
fi
if [ -n "$FAKE_WRITE" ]; then
	echo "iteration work" >> "$FAKE_WRITE"
fi
cat "$FAKE_STREAM"
if [ -n "$FAKE_SLEEP" ]; then
	sleep "$FAKE_SLEEP"
fi
exit "${FAKE_EXIT:-0}"

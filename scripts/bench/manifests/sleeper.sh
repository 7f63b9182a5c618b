#!/bin/bash
# A tool that never answers and leaves a setsid'd grandchild behind. Every
# sleeper carries the marker as its argv[0] (exec -a), so the bench can count
# orphans after each timeout.
setsid bash -c 'exec -a "$0" sleep 1000' "$1" &
exec -a "$1" sleep 1000

#!/bin/sh
# A tool that never answers and leaves a setsid'd grandchild behind, marked so
# the bench can count orphans after each timeout.
setsid sh -c "sleep 1000 # $1" &
exec sleep 1000 "# $1"

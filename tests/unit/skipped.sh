#!/bin/sh
# tests/unit/skipped.sh: make check's stand-in for the Check unit tests when configure found no
# Check. Exit status 77 is Automake's SKIP; tests/run-tests.sh counts it as a failure, never as
# a pass.
echo "unit tests skipped: configure found no Check (>= 0.15); install it (Debian: apt-get install check) and re-run configure"
exit 77

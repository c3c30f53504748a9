# shellcheck shell=bash
# Sourced by the cluster's fault scripts: reading the records that tests/mp/fault_test and
# tests/mp/first_contact_test leave (lines of KEY=VALUE words), and decimal arithmetic on
# their times (bash has integers only).

# rec_field FILE KEY: the value of the first KEY=VALUE word in FILE; nothing where it has none
# (a word fin_status=... is not a status=...)
rec_field() { sed -nE "s/^(.* )?$2=([^ ]*).*/\\2/p" "$1" | head -n 1; }
# A - B with 3 decimals; whether A > B
fsub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
fgt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }

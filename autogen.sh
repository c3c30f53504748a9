#!/bin/sh
# Generates ./configure from configure.ac and Makefile.am (needs autoconf, automake, libtool).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf -fi

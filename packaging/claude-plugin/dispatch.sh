#!/bin/sh
# engram's plugin ships its binaries for every platform it supports, in
# bin/OS-CPU/. This script stands in bin/ under each binary's name: it picks
# the one for this machine, puts a link to it in its own place, so that from
# then on Claude Code starts the native binary with no shell in between, and
# runs it. A hook on a machine engram has no binary for does nothing.
name=${0##*/}
dir=${0%/*}
case $(uname -sm) in
"Linux x86_64") p=linux-x64 ;;
"Linux aarch64" | "Linux arm64") p=linux-arm64 ;;
"Darwin x86_64") p=darwin-x64 ;;
"Darwin arm64") p=darwin-arm64 ;;
*) p= ;;
esac
if [ -z "$p" ] || [ ! -x "$dir/$p/$name" ]; then
	echo "engram: no $name for $(uname -sm) in this plugin" >&2
	case $name in engram-hook-*) exit 0 ;; *) exit 1 ;; esac
fi
if ln -s "$p/$name" "$dir/.$name.$$" 2>/dev/null; then
	mv -f "$dir/.$name.$$" "$dir/$name" 2>/dev/null || rm -f "$dir/.$name.$$"
fi
exec "$dir/$p/$name" "$@"

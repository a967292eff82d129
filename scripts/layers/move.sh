#!/usr/bin/env bash
# Usage: move.sh [--dry-run] WORKTREE   (see README.md next to this script)
exec python3 "$(dirname "$(readlink -f "$0")")/move.py" "$@"

#!/usr/bin/env bash
# Install the Debian packages perflog builds and tests with (root, or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $(cat packaging/build-deps.txt)
# The dashboard's npm packages need npm: NodeSource's nodejs bundles it, Debian's nodejs does not
# (and Debian's npm conflicts with NodeSource's nodejs, so it is only added when missing).
if ! command -v npm >/dev/null; then
  $SUDO apt-get install -y -qq --no-install-recommends npm
fi

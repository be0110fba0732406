#!/usr/bin/env bash
# Installs the Python `mcp` client that test/e2e/unaware-clients.test.ts drives the server with,
# into the virtualenv .venv/python-client, from the package index pip is set up with.
# Idempotent: it does nothing when the venv already holds test/e2e/python/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv/python-client
requirements=test/e2e/python/requirements.txt
stamp="$venv/requirements.installed"

if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp" && "$venv/bin/python" -c 'import mcp' 2>/dev/null; then
  echo "setup-python-client: $venv is up to date"
  exit 0
fi

if ! command -v python3 >/dev/null; then
  echo "setup-python-client: python3 is missing (Debian: apt-get install -y python3 python3-venv)" >&2
  exit 1
fi
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "setup-python-client: python3 cannot make a virtualenv (Debian: apt-get install -y python3-venv)" >&2
  exit 1
fi

rm -rf "$venv"
python3 -m venv "$venv"
# No retries: an index this machine cannot reach fails at once instead of after minutes of backoff.
"$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 --requirement "$requirements"
cp "$requirements" "$stamp"
echo "setup-python-client: installed $("$venv/bin/python" -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))') into $venv"

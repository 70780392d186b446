#!/bin/sh
# The whole suite (make test). $1: the virtual environment's python.
set -eu
exec "$1" -m pytest -q

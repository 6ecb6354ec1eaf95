#!/usr/bin/env python3
"""A patchspec executor for one tool, written with the kit."""
from patchspec.executor import serve
from read_file_impl import read_file

serve(
    {"workspace.read_file": read_file},
    name="kit-example-python",
    version="1.0.0",
)

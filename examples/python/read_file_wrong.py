#!/usr/bin/env python3
"""Deliberately wrong: ignores maxBytes. patchspec check must fail it."""
from patchspec.executor import serve
from read_file_impl import read_file


def read_whole_file(params, workspace_root, session):
    return read_file(dict(params, maxBytes=None), workspace_root, session)


serve({"workspace.read_file": read_whole_file}, name="kit-example-wrong", version="1.0.0")

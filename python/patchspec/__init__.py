"""patchspec: the conformance gate for coding-agent file-edit tools.

The wheel puts the `patchspec` binary (corpus embedded) on PATH; this
package holds the executor kit, `patchspec.executor`, for writing the
program under test in Python. Standard library only.
"""

try:
    from importlib.metadata import PackageNotFoundError, version as _version

    __version__ = _version("patchspec")
except PackageNotFoundError:  # run from a clone, not installed
    __version__ = "0+unknown"

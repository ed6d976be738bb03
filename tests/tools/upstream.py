"""The pinned upstream archives of ../shared/upstream/ (its README lists them),
unpacked for a test: the one place tests/tools read them from.

    from upstream import SKIP, archive_path, unpack
    with tempfile.TemporaryDirectory() as temp:
        tree = unpack(archive_path("primus-fd1eeabb.tar.gz"), temp)
"""
import os
import tarfile

SKIP = 77  # ctest's SKIP_RETURN_CODE: the archive is absent
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DIR = os.path.join(os.path.dirname(ROOT), "shared", "upstream")


def archive_path(name, directory=None):
    """The path of archive `name` in `directory` (default ../shared/upstream)."""
    return os.path.join(directory or DEFAULT_DIR, name)


def unpack(archive, into):
    """The archive's top directory, unpacked below `into`."""
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(into, filter="data")
        else:
            tar.extractall(into)
        top = tar.getnames()[0].split("/")[0]
    return os.path.join(into, top)

"""The pinned upstream archives of ../shared/upstream/ (its README lists them),
unpacked for a test: the one place tests/tools read them from.

    from upstream import SKIP, archive_path, unpack
    with tempfile.TemporaryDirectory() as temp:
        tree = unpack(archive_path("primus-fd1eeabb.tar.gz"), temp)
"""
import os
import tarfile
import tempfile

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


def on_tree(tree, archive, check):
    """check(TREE) on `tree` when given, else on `archive` unpacked into a
    temporary directory; SKIP (saying so) when neither is there."""
    if tree:
        return check(tree)
    if not archive or not os.path.isfile(archive):
        print("skipped: the pinned archive %s is absent" % archive)
        return SKIP
    with tempfile.TemporaryDirectory(prefix="upstream-") as unpacked:
        return check(unpack(archive, unpacked))

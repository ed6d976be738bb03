"""primus-cli's stack dumper, loaded by every Python worker at start-up.

The node agent puts this directory first on the workers' PYTHONPATH (off
with direct.stack_dumper: false). On PRIMUS_STACK_SIGNAL, Python's own
faulthandler writes every thread's Python stack to PRIMUS_STACK_FILE (the
rank's file in its attempt directory), from the signal handler itself: it
works while the main thread is stuck inside a collective or a C call, with
no tool installed. Then the sitecustomize this one hides (the user's, a
venv's, a distribution's) is imported, as if this one were not there.
"""
import os
import sys


def _install():
    path = os.environ.get("PRIMUS_STACK_FILE")
    number = os.environ.get("PRIMUS_STACK_SIGNAL")
    if not path or not number or not number.isdigit():
        return
    try:
        import faulthandler
        # Opened once, kept open: the handler must not allocate or open files.
        stack_file = open(path, "a", buffering=1)
        faulthandler.register(int(number), file=stack_file, all_threads=True, chain=False)
        globals()["_primus_stack_file"] = stack_file
    except Exception as error:  # never break the worker over its stacks
        sys.stderr.write("primus-cli stack dumper: not installed: %s\n" % error)


def _chain():
    """Imports the next sitecustomize on sys.path, the one this module hides."""
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    rest = [entry for entry in sys.path if os.path.abspath(entry or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.origin is None or os.path.dirname(os.path.abspath(spec.origin)) == here:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_install()
_chain()

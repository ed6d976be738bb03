"""Put on PYTHONPATH to record a worker's environment without touching the
script it runs: at interpreter start-up, a process that has RANK and
LOCAL_RANK (a torchrun worker; the launcher itself has neither) and
EXAMPLES_ENV_DUMP=<dir> writes os.environ as JSON to <dir>/env.<RANK>.json.
Used by tests/integration/torchrun_examples_test.cc, where the worker
scripts are pytorch/examples' own and stay as they are."""
import json
import os

_dir = os.environ.get("EXAMPLES_ENV_DUMP")
if _dir and "RANK" in os.environ and "LOCAL_RANK" in os.environ:
    with open(os.path.join(_dir, "env.%s.json" % os.environ["RANK"]), "w") as _file:
        json.dump(dict(os.environ), _file, indent=1, sort_keys=True)

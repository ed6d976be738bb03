"""Worker for the side-by-side comparison with torchrun: writes its
environment as JSON to <out_dir>/env.<RANK>.json, prints one line to stdout
and one to stderr naming its rank and arguments, and exits with
<exit_code> + RANK when an exit code is given (0: success)."""
import json
import os
import sys

out_dir = sys.argv[1]
exit_code = int(sys.argv[2]) if len(sys.argv) > 2 else 0
rank = int(os.environ["RANK"])
with open(os.path.join(out_dir, "env.%d.json" % rank), "w") as f:
    json.dump(dict(os.environ), f, indent=1, sort_keys=True)
print("worker rank %d of %s local %s argv %s" % (rank, os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"],
                                                 sys.argv[1:]), flush=True)
print("worker stderr rank %d" % rank, file=sys.stderr, flush=True)
sys.exit(exit_code + rank if exit_code else 0)

"""Worker for the environment comparison: writes its environment as JSON to
<out_dir>/env.<RANK>.json (the agent and torchrun get the same script)."""
import json
import os
import sys

out_dir = sys.argv[1]
with open(os.path.join(out_dir, "env.%s.json" % os.environ["RANK"]), "w") as f:
    json.dump(dict(os.environ), f, indent=1, sort_keys=True)

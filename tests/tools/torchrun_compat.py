#!/usr/bin/python3
"""torchrun from Debian's torch 1.13, made to run on Python 3.11.

torch 1.13's Std.from_str iterates an IntFlag enum to map "0".."3" to a
member; on Python 3.11 that iteration skips the composite member ALL (3), so
from_str returns None and argument parsing crashes. This wrapper replaces
Std.from_str with a direct mapping (accepting "N" and "i:N,i:N" maps), then
runs torch.distributed.run.main() with the same arguments. Used only to put
torchrun's behaviour side by side with the agent's (tests and benches).

Usage: /usr/bin/python3 tests/tools/torchrun_compat.py [torchrun args]
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api as elastic_api
from torch.distributed import run as torch_run

_VALUE = re.compile(r"^[0-3]$")
_MAPPING = re.compile(r"^(\d:[0-3],)*(\d:[0-3])$")


def _from_str(vm):
    if _VALUE.match(vm):
        return elastic_api.Std(int(vm))
    if _MAPPING.match(vm):
        return {int(i): elastic_api.Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError(f"{vm} does not match <{_VALUE.pattern}> or <{_MAPPING.pattern}>")


elastic_api.Std.from_str = classmethod(lambda cls, vm: _from_str(vm))

if __name__ == "__main__":
    sys.argv[0] = "torchrun"
    sys.exit(torch_run.main())

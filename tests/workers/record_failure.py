"""A worker that fails through PyTorch's @record: torch writes the exception
to TORCHELASTIC_ERROR_FILE, which the agent must read for its banner."""
import os
import time

from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    if os.environ["RANK"] == "1":
        raise ValueError("rank one is broken")
    time.sleep(30)


if __name__ == "__main__":
    main()

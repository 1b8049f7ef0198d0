"""One factor for the tests' time limits (issue 36). A limit in a test guards against a hang; it is written for the
suite alone on the machine, and a machine whose cores other jobs share runs the same work several times slower.
Every such limit is `scaled(seconds)`: the seconds the work needs, times TIME_SCALE.

TIME_SCALE is $CLAIMS_PIPELINE_TEST_TIME_SCALE when set; otherwise it is read from the machine when the session
starts (the root conftest puts it in the environment, so that xdist's workers and the commands the tests run share
it): 1 + 1.5 × (runnable processes per core over the last minute), at least 1 and at most MAX_SCALE. A limit that
scales only costs time when something really hangs."""

from __future__ import annotations

import os

ENV = "CLAIMS_PIPELINE_TEST_TIME_SCALE"
MAX_SCALE = 8.0
# the suite's own processes come on top of the load it finds, so each other runnable process per core slows it by
# more than its share: issue 36's suite took 14 min alone and 68 min (x4.9) beside a load of about 6 on 2 cores,
# where this gives 1 + 1.5 x 3 = 5.5
LOAD_WEIGHT = 1.5


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def from_load(load: float, cores: int) -> float:
    return round(min(MAX_SCALE, max(1.0, 1.0 + LOAD_WEIGHT * load / max(1, cores))), 1)


def _time_scale() -> float:
    given = os.environ.get(ENV, "").strip()
    if given:
        try:
            value = float(given)
        except ValueError:
            raise SystemExit(f"{ENV}={given!r}: not a number (a factor for the tests' time limits, e.g. 3)") from None
        if not value > 0:
            raise SystemExit(f"{ENV}={given!r}: must be above 0 (a factor for the tests' time limits, e.g. 3)")
        return value
    return from_load(os.getloadavg()[0], cpus())


TIME_SCALE = _time_scale()


def scaled(seconds: float) -> float:
    """A time limit for work that takes up to `seconds` with the suite alone on the machine."""
    return seconds * TIME_SCALE

"""Power cuts under the real server (power_cut.py): the CI form of `scripts/faults.sh power-cut`,
and its control without fsync, which must lose writes or the harness proves nothing.

20 cycles (FDYNO_FULL=1: 200), seed FDYNO_SEED (default 1). fdyno-specific: it cuts the power
under the server it starts.
"""
import os

import power_cut

FULL = os.environ.get("FDYNO_FULL") == "1"
SEED = int(os.environ.get("FDYNO_SEED", 1))


def test_acknowledged_writes_survive_power_cuts_at_every_stage(tmp_path):
    run = power_cut.PowerCutRun(tmp_path, SEED)
    run.run(200 if FULL else 20)  # raises power_cut.Mismatch on a loss or mismatch
    print(run.summary())
    print(run.result_line())
    assert not run.missing_stages(), f"no cut landed in {run.missing_stages()}"
    assert run.acknowledged() > 200 and run.stream.records > 200, run.summary()
    assert sum(w.resends_after_crash for w in run.writers) > 0, \
        f"no tokened request was resent after a cut: {run.summary()}"
    assert run.tails["torn"] and run.tails["zeros"] and run.tails["garbage"], run.summary()


def test_without_fsync_a_power_cut_loses_acknowledged_writes(tmp_path):
    run = power_cut.PowerCutRun(tmp_path, SEED, durability="none")
    try:
        run.run(20)
    except power_cut.Mismatch as e:
        assert e.kind == "lost", e
        print(f"the control lost writes after {run.cycles} cycles: {e}"[:300])
        return
    raise AssertionError(f"20 power cuts without fsync lost nothing: {run.summary()}")

#!/usr/bin/env python3
"""Do two tuning runs of a family pick the same best configs? For each problem in both databases:
each run's best config and median, and the full run's median of the other run's best config.

    bench/same_best.py FAMILY RUN.db FULL.db

RUN.db: the run to check (the main job, with configs cut short); FULL.db: a brute force that
measured every config in full (`--strategy brute_force --cut-ratio 0`). "Within noise" is judged
by the last column: the full run's median of RUN's best config over its own best (1.000 when they
agree). Standard library only (Python 3.8 and up)."""
import sqlite3
import sys


def best_and_all(path, family):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT p.key, r.config, r.time_ms_median FROM results r JOIN problems p ON p.id = r.problem_id "
        "WHERE p.family = ? AND r.status = 'ok' AND r.time_ms_median IS NOT NULL", (family,)).fetchall()
    by_problem = {}
    for key, config, ms in rows:
        by_problem.setdefault(key, {})[config] = ms
    return by_problem


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    family, run_path, full_path = sys.argv[1:]
    run, full = best_and_all(run_path, family), best_and_all(full_path, family)
    print(f"{'problem':<28} {'run best':<44} {'ms':>8}  {'full best':<44} {'ms':>8}  {'run best in full':>16} {'ratio':>6}")
    worst = 1.0
    for key in sorted(set(run) & set(full), key=lambda k: (len(k), k)):
        run_config = min(run[key], key=run[key].get)
        full_config = min(full[key], key=full[key].get)
        again = full[key].get(run_config)
        ratio = again / full[key][full_config] if again else float("nan")
        worst = max(worst, ratio) if again else worst
        print(f"{key:<28} {run_config:<44} {run[key][run_config]:8.4f}  {full_config:<44} {full[key][full_config]:8.4f}  "
              f"{again if again else float('nan'):16.4f} {ratio:6.3f}")
    print(f"worst ratio: {worst:.3f} (the run's best config, measured in full, over the full run's best)")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Predict the saturation logs' held-out tests with SimGrid, beside commcal's models.

The saturation logs of data/saturation/ (SimGrid platform-calibration's saturation test, MPICH
3.1.4 over TCP, 4,000,000-byte messages; datasets/saturation.go says how the program runs)
hold four tests per cluster: k one-way pairs (send), k same-peer exchanges (sendrecv_same),
k/2 directed cycles of four ranks (sendrecv_diff) and MPI_Alltoall on 2, 4, ... ranks. commcal
calibrates on the one-way sweep, one exchange and one cycle, and holds out the other exchanges,
cycles and every all-to-all. This script puts SimGrid beside it, for each cluster:

  1. the platform: the cluster description's one switch, every node joined to it by a NIC
     link whose two directions are shared apart (SPLITDUPLEX); rank r runs on the node the
     .ranks file gives it;
  2. calibration, under CM02 (--cfg=network/model:CM02, --cfg=network/crosstraffic:0: max-min
     sharing of the links as given) and under LV08 (SimGrid's default model: bandwidth factor
     0.97, latency factor 13.01, 5% of every flow's rate on its reverse path): the NIC links'
     bandwidth is fitted so that SimGrid's times for the one-way k-pair sweep (send, k = 1 ...)
     match, by least squares over every transfer, the transfers' measured means (a flow's time
     is its receiving rank's duration, as commcal reads it). Every message has 4,000,000 bytes,
     so latency and bandwidth are not told apart; the route's latency is the one SimGrid's
     own calibration of the same cluster measured (LATENCY_S below);
  3. the held-out tests, simulated as the MPI program runs them, each rank an actor that posts
     its send (put_async) and its receive (get_async) of a round and waits for both before its
     next round: exchanges (every rank sends to its peer and receives from it), cycles (sends
     to one rank, receives from another), and MPI_Alltoall as MPICH 3.1.4 runs it for 4 MB
     blocks (src/mpi/coll/alltoall.c, the long-message branch: n - 1 MPIC_Sendrecv rounds, with
     rank XOR i in round i when n is a power of two, else to rank + i and from rank - i, mod n;
     no barrier between rounds);
  4. each test's mean signed error, as commcal's validation scores it: a transfer's measured
     time is the mean of its runs and its error (predicted - measured) / measured, a test's the
     mean over its transfers; an all-to-all run's time is its slowest rank's duration and the
     measured time the mean over runs.

It prints, per cluster, what was fitted and a Markdown table: one row per held-out test, its
measured mean, the mean signed error of every commcal model (from the run directory's
accuracy.json; models whose errors agree to the printed digit on every row share a column),
then SimGrid CM02 and LV08. Everything printed is deterministic.

Each cluster's run directory comes from commcal (from the repository's root):

    commcal run --cluster data/saturation/miriel.toml --ranks @data/saturation/miriel.ranks \\
        --format saturation --mpi-library mpich --out /tmp/sg-miriel \\
        data/saturation/miriel_2016-06-27/load_*.csv

Run with Debian's interpreter, which has the python3-simgrid module (SimGrid 3.32):

    /usr/bin/python3 bench/simgrid_saturation.py miriel=/tmp/sg-miriel plafrim=/tmp/sg-plafrim

NAME=RUNDIR reads data/saturation/NAME.toml, NAME.ranks and the logs of the one folder
NAME_*/ (--data names another folder). Each SimGrid model runs in a process of its own, as
SimGrid has one engine per process. Exit status 1 when a self-check fails: a lone pair's
SimGrid time is not latency x latency factor + bytes / (bandwidth x bandwidth factor), a
calibration transfer's time is not affine in 1/bandwidth, or the logs' all-to-all means differ
from the run directory's; exit status 2 on bad input (the message names the file, and the line
of a log).
"""

import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import tomllib

# The one-way latency of a route (sender's NIC to receiver's NIC) for messages of 400-450 kB
# and more, as SimGrid's own calibration of the same clusters measured it (Ezibenroc/
# platform-calibration, commit 899f044, data/<cluster>/calibration/testplatform.md, "Pingpong
# timing", segment Large: a ping-pong is two transfers, so half its intercept; the same value is
# smpi/lat-factor's last segment times the expected latency 5e-5 s of testplatform.xml):
# miriel 9.238e-05 s / 2, plafrim 6.981e-05 s / 2. At 4 MB it is under 1% of a transfer.
LATENCY_S = {
    "miriel": 0.923798288770192 * 5e-5,
    "plafrim": 0.698058157888401 * 5e-5,
}

# SimGrid's two network models, with the factors their documentation gives, for the self-check
# of a lone pair: time = latency_factor x route latency + bytes / (bandwidth_factor x bandwidth).
MODELS = [
    ("CM02", ["network/model:CM02", "network/crosstraffic:0"], 1.0, 1.0),
    ("LV08", [], 13.01, 0.97),
]

# A self-check passes within this relative tolerance (SimGrid dates events to 1e-9 s).
CHECK_TOLERANCE = 1e-9

# MPI operation each log holds, by test.
TESTS = {"send": "MPI_Send", "sendrecv_same": "MPI_Sendrecv",
         "sendrecv_diff": "MPI_Sendrecv", "alltoall": "MPI_Alltoall"}


class InputError(Exception):
    """Bad input: the message names the file (and line) and what was expected."""


# ----------------------------------------------------------------------------------------
# Inputs: cluster description, ranks, logs, run directory.

def load_cluster(path):
    """Name, nominal NIC rate (bit/s) and nodes of a one-switch cluster description."""
    try:
        with open(path, "rb") as f:
            desc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{path}: {e}") from e
    if desc.get("backbone") or len(desc.get("rack", [])) != 1 or desc.get("node"):
        raise InputError(f"{path}: want one [[rack]], no [backbone] and no [[node]] overrides "
                         "(this script builds one switch with identical NICs)")
    rack = desc["rack"][0]
    nodes = list(rack.get("nodes", []))
    prefix, first, count = rack.get("node_prefix", ""), rack.get("node_first", 0), rack.get("node_count", 0)
    nodes += [f"{prefix}{first + i}" for i in range(count)]
    rate = desc.get("nic_rate_bps")
    if not isinstance(rate, (int, float)) or not rate > 0 or not nodes:
        raise InputError(f"{path}: want nic_rate_bps > 0 and at least one node")
    return desc.get("name", ""), float(rate), nodes


def load_ranks(path, nodes):
    """The node of each rank, rank 0 first (one per line; # starts a comment)."""
    ranks = []
    try:
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                name = line.split("#", 1)[0].strip()
                if not name:
                    continue
                if name not in nodes:
                    raise InputError(f"{path}:{no}: node {name!r} is not in the cluster description")
                ranks.append(name)
    except OSError as e:
        raise InputError(f"{path}: {e}") from e
    if len(ranks) < 2 or len(set(ranks)) != len(ranks):
        raise InputError(f"{path}: want two ranks or more, one per node")
    return ranks


def read_log(path, op):
    """Rows of a saturation log by rank, in file order: {rank: [(line, bytes, duration_s)]}."""
    rows = {}
    last = -1
    try:
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                fields = line.strip().split(",")
                if len(fields) != 5:
                    raise InputError(f"{path}:{no}: want 5 fields rank,op,size,start_ms,duration_ms, got {len(fields)}")
                try:
                    rank, size, dur = int(fields[0]), int(fields[2]), float(fields[4])
                except ValueError as e:
                    raise InputError(f"{path}:{no}: want integer rank and size and a duration in ms: {e}") from e
                if fields[1] != op:
                    raise InputError(f"{path}:{no}: operation {fields[1]!r}, want {op}")
                if rank != last and rank in rows:
                    raise InputError(f"{path}:{no}: rank {rank}'s rows are not contiguous")
                if not (dur > 0 and math.isfinite(dur)) or size <= 0:
                    raise InputError(f"{path}:{no}: want a positive size and duration")
                last = rank
                rows.setdefault(rank, []).append((no, size, dur * 1e-3))
    except OSError as e:
        raise InputError(f"{path}: {e}") from e
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def steps_of(test, half):
    """Steps x of a test on 2*half ranks (k = x + 1), in the order the program runs them."""
    return [x for x in range(half) if test != "sendrecv_diff" or x % 2 == 1]


def first_step(test, rank, half):
    """Index in steps_of of the first step a rank takes part in (datasets/saturation.go)."""
    x0 = rank // 2 if test == "alltoall" else (rank if rank < half else rank - half)
    return x0 // 2 if test == "sendrecv_diff" else x0


def peer(test, rank, half):
    """The rank that rank sends to in send, sendrecv_same and sendrecv_diff."""
    if rank < half:
        return rank + half
    if test == "sendrecv_diff":
        return rank - half + 1 if (rank - half) % 2 == 0 else rank - half - 1
    return rank - half


def step_ranks(test, x, half):
    """The ranks taking part in step x."""
    if test == "alltoall":
        return list(range(2 * (x + 1)))
    return list(range(x + 1)) + list(range(half, half + x + 1))


def runs_by_step(path, test, rows, n_ranks):
    """{x: {rank: [duration of each run]}} for every step, with the runs per step checked."""
    half = n_ranks // 2
    steps = steps_of(test, half)
    runs = None
    for rank, rr in sorted(rows.items()):
        if not 0 <= rank < 2 * half:
            raise InputError(f"{path}:{rr[0][0]}: rank {rank}, want 0 to {2 * half - 1}")
        taken = len(steps) - first_step(test, rank, half)
        if taken <= 0 or len(rr) % taken:
            raise InputError(f"{path}:{rr[0][0]}: rank {rank} has {len(rr)} rows, "
                             f"not a multiple of its {taken} steps")
        if runs is None:
            runs = len(rr) // taken
        elif len(rr) // taken != runs:
            raise InputError(f"{path}:{rr[0][0]}: rank {rank} has {len(rr) // taken} runs per step, rank 0 {runs}")
    out = {}
    for s, x in enumerate(steps):
        out[x] = {}
        for rank in step_ranks(test, x, half):
            if rank not in rows:
                raise InputError(f"{path}: rank {rank} has no rows, want it in step x = {x}")
            base = (s - first_step(test, rank, half)) * runs
            out[x][rank] = [rows[rank][base + i][2] for i in range(runs)]
    return out


def mean(xs):
    return sum(xs) / len(xs)


def build_tests(logdir, n_ranks):
    """The four tests of a cluster's logs as SimGrid scenarios with their measured times.

    A scenario is a program per rank, a list of rounds (send_to, receive_from), -1 for none.
    Transfer tests carry their flows (src, dst, measured mean of the receiver's durations);
    all-to-alls their measured mean of the slowest rank's duration per run."""
    half = n_ranks // 2
    tests = []
    size = None
    for test, op in TESTS.items():
        path = os.path.join(logdir, f"load_{test}.csv")
        rows = read_log(path, op)
        sizes = {s for rr in rows.values() for _, s, _ in rr}
        if len(sizes) != 1 or (size is not None and sizes != {size}):
            raise InputError(f"{path}: message sizes {sorted(sizes)}, want one size in every log")
        size = sizes.pop()
        for x, durs in runs_by_step(path, test, rows, n_ranks).items():
            k = x + 1
            if test == "alltoall":
                n = 2 * k
                pof2 = n & (n - 1) == 0
                programs = {r: [((r ^ i, r ^ i) if pof2 else ((r + i) % n, (r - i) % n))
                                for i in range(1, n)] for r in range(n)}
                runs = list(zip(*(durs[r] for r in range(n))))
                tests.append({"test": test, "k": k, "ranks": n, "programs": programs,
                              "measured": mean([max(run) for run in runs]), "flows": []})
                continue
            senders = step_ranks(test, x, half)
            if test == "send":
                senders = senders[:k]
            flows = [(s, peer(test, s, half)) for s in senders]
            programs = {}
            for s, d in flows:
                programs.setdefault(s, [[-1, -1]])[0][0] = d
                programs.setdefault(d, [[-1, -1]])[0][1] = s
            tests.append({"test": test, "k": k, "ranks": len(programs),
                          "programs": {r: [tuple(p[0])] for r, p in programs.items()},
                          "flows": [(s, d, mean(durs[d])) for s, d in flows]})
    return tests, size


def setting_of(t):
    """commcal's validation setting of a held-out transfer test, None for other tests."""
    kind = {"sendrecv_same": "exchange", "sendrecv_diff": "cycle"}.get(t["test"])
    return f"{kind}-F{len(t['flows'])}" if kind else None


def read_run(rundir):
    """Every model's mean signed error per setting and per all-to-all, from accuracy.json."""
    path = os.path.join(rundir, "accuracy.json")
    try:
        with open(path, encoding="utf-8") as f:
            acc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: {e}") from e
    try:
        models = [m["model"] for m in acc["overall"]["models"]]
        settings = {s["setting"]: {m["model"]: m["mean_err"] for m in s["models"]} | {"_transfers": s["models"][0]["transfers"]}
                    for s in acc.get("settings", [])}
        colls = {c["procs"]: ({m["model"]: m["err"] for m in c["models"]}, c["measured_s"])
                 for c in acc.get("collectives", []) if c["op"] == "alltoall"}
    except (KeyError, IndexError, TypeError) as e:
        raise InputError(f"{path}: not a commcal accuracy.json (format commcal-accuracy/1): missing {e}") from e
    return acc.get("default_model", ""), models, settings, colls


# ----------------------------------------------------------------------------------------
# SimGrid, in a child process per model.

def platform_xml(nodes, link_latency_s, bandwidth):
    """One switch (a router), each node a split-duplex NIC link to it, in a Floyd zone."""
    lines = ["<?xml version='1.0'?>",
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             '<zone id="cluster" routing="Floyd">',
             '  <router id="switch"/>']
    for n in nodes:
        lines.append(f'  <host id="{n}" speed="1Gf"/>')
        lines.append(f'  <link id="nic-{n}" bandwidth="{bandwidth!r}Bps" latency="{link_latency_s!r}s" sharing_policy="SPLITDUPLEX"/>')
    for n in nodes:
        lines.append(f'  <route src="{n}" dst="switch" symmetrical="NO"><link_ctn id="nic-{n}" direction="UP"/></route>')
        lines.append(f'  <route src="switch" dst="{n}" symmetrical="NO"><link_ctn id="nic-{n}" direction="DOWN"/></route>')
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


def child(spec):
    """Calibrates and runs every scenario under one SimGrid model; returns the results.

    The scenarios run one after the other in one simulation, each once the previous one has
    ended (the network is then idle), with times taken from the scenario's start. The NIC
    bandwidth is set between scenarios: the calibration sweep runs at two bandwidths, which
    gives each transfer's time as a + b / bandwidth (checked at the fitted bandwidth), and the
    least-squares bandwidth follows in closed form."""
    from simgrid import Actor, Comm, Engine, Host, Mailbox  # pylint: disable=import-outside-toplevel

    name, options, lat_factor, bw_factor = next(m for m in MODELS if m[0] == spec["model"])
    size, route_lat, nominal = spec["bytes"], spec["latency_s"], spec["nominal_Bps"]
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "platform.xml")
        with open(xml, "w", encoding="utf-8") as f:
            f.write(platform_xml(spec["nodes"], route_lat / 2, nominal))
        engine = Engine([sys.argv[0], "--log=root.thres:critical"] + [f"--cfg={o}" for o in options])
        engine.load_platform(xml)
    nics = [link for link in engine.all_links if link.name.startswith("nic-")]
    hosts = {n: Host.by_name(n) for n in spec["nodes"]}
    out = {"model": name}

    def rank_actor(sid, rank, rounds, recv, done):
        for dst, src in rounds:
            comms = []
            if dst >= 0:
                comms.append(Mailbox.by_name(f"{sid}/{rank}>{dst}").put_async(rank, size))
            if src >= 0:
                get, _ = Mailbox.by_name(f"{sid}/{src}>{rank}").get_async()
                comms.append(get)
            Comm.wait_all(comms)
            if src >= 0:
                recv[(src, rank)] = get.finish_time
        done[rank] = Engine.clock

    def run(sid, test, bandwidth):
        """Runs one scenario at a NIC bandwidth; flow and all-to-all times from its start."""
        for link in nics:
            link.set_bandwidth(bandwidth)
        t0 = Engine.clock
        recv, done = {}, {}
        actors = [Actor.create(f"{sid}-r{r}", hosts[spec["ranks"][int(r)]], rank_actor,
                               sid, int(r), [tuple(p) for p in prog], recv, done)
                  for r, prog in sorted(test["programs"].items(), key=lambda kv: int(kv[0]))]
        for a in actors:
            a.join()
        if test["test"] == "alltoall":
            return max(done.values()) - t0
        return [recv[(s, d)] - t0 for s, d, _ in test["flows"]]

    def controller():
        calib = [t for t in spec["tests"] if t["test"] == "send"]
        # Each calibration transfer's time is a + b x at x = 1/bandwidth: two runs give a, b.
        x0, x1 = 1 / nominal, 2 / nominal
        t0s = [v for i, t in enumerate(calib) for v in run(f"c0-{i}", t, 1 / x0)]
        t1s = [v for i, t in enumerate(calib) for v in run(f"c1-{i}", t, 1 / x1)]
        bs = [(b1 - a0) / (x1 - x0) for a0, b1 in zip(t0s, t1s)]
        as_ = [a0 - b * x0 for a0, b in zip(t0s, bs)]
        measured = [m for t in calib for _, _, m in t["flows"]]
        # Least squares over the transfers: minimise sum (a_i + b_i x - m_i)^2 over x.
        x = sum(b * (m - a) for a, b, m in zip(as_, bs, measured)) / sum(b * b for b in bs)
        bw = 1 / x
        fitted = [v for i, t in enumerate(calib) for v in run(f"c-{i}", t, bw)]
        affine = max(abs(f - (a + b * x)) / f for f, a, b in zip(fitted, as_, bs))
        lone = next(t for t in calib if t["k"] == 1)
        expected = lat_factor * route_lat + size / (bw_factor * bw)
        lone_time = fitted[calib.index(lone)]
        out.update(bandwidth_Bps=bw, lone_pair_s=lone_time, lone_pair_expected_s=expected,
                   affine_worst=affine, calibration=fitted)
        out["tests"] = [run(f"h-{i}", t, bw) for i, t in enumerate(spec["tests"])]

    Actor.create("controller", hosts[spec["nodes"][0]], controller)
    engine.run()
    return out


def simulate(spec):
    """Runs child() in a process of its own and returns its result."""
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"],
                          input=json.dumps(spec), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"SimGrid {spec['model']} failed (status {proc.returncode}):\n{proc.stderr}")
    return json.loads(proc.stdout)


# ----------------------------------------------------------------------------------------
# The table.

def pct(e):
    return f"{100 * e:+.1f}%"


def label(t):
    if t["test"] == "sendrecv_same":
        return f"exchange k={t['k']} ({2 * t['k']} ranks)"
    if t["test"] == "sendrecv_diff":
        return f"cycle k={t['k']} ({2 * t['k']} ranks)"
    return f"alltoall {t['ranks']} ranks"


def cluster_report(name, rundir, data, latency):
    """Prints what was fitted and the table of one cluster; returns the failed self-checks."""
    toml = os.path.join(data, f"{name}.toml")
    cname, rate, nodes = load_cluster(toml)
    ranks = load_ranks(os.path.join(data, f"{name}.ranks"), nodes)
    logdirs = sorted(d for d in glob.glob(os.path.join(data, f"{name}_*")) if os.path.isdir(d))
    if len(logdirs) != 1:
        raise InputError(f"{data}: want one folder {name}_*/ of logs, found {len(logdirs)}")
    if latency is None:
        if cname not in LATENCY_S:
            raise InputError(f"{toml}: no measured latency for cluster {cname!r}: give --latency SECONDS")
        latency = LATENCY_S[cname]
    tests, size = build_tests(logdirs[0], len(ranks))
    default, models, settings, colls = read_run(rundir)

    spec = {"nodes": nodes, "ranks": ranks, "bytes": size, "latency_s": latency,
            "nominal_Bps": rate / 8, "tests": tests}
    results = [simulate(spec | {"model": m[0]}) for m in MODELS]

    failures = []
    print(f"### {cname}: {len(ranks)} ranks, {size} B per message, logs {os.path.basename(logdirs[0])}/")
    print()
    print(f"Route latency {latency * 1e6:.2f} µs (two NIC links of {latency * 5e5:.2f} µs). "
          "NIC link bandwidth fitted to the one-way k-pair sweep "
          f"(k = 1-{max(t['k'] for t in tests if t['test'] == 'send')}, "
          f"{sum(len(t['flows']) for t in tests if t['test'] == 'send')} transfers, least squares):")
    print()
    calib = [t for t in tests if t["test"] == "send"]
    measured = [m for t in calib for _, _, m in t["flows"]]
    for (mname, _, lat_f, bw_f), res in zip(MODELS, results):
        bw = res["bandwidth_Bps"]
        errs = [(p - m) / m for p, m in zip(res["calibration"], measured)]
        print(f"- SimGrid {mname}: NIC link bandwidth {bw * 8e-9:.3f} Gbit/s; after the model's factors "
              f"(bandwidth x {bw_f:g}, latency x {lat_f:g}) a lone flow runs at {bw * bw_f * 8e-9:.3f} Gbit/s "
              f"after {lat_f * latency * 1e6:.1f} µs, {res['lone_pair_s'] * 1e3:.3f} ms for {size} B; "
              f"k-pair sweep mean signed error {pct(mean(errs))}, mean |ε| {100 * mean([abs(e) for e in errs]):.1f}%")
        if abs(res["lone_pair_s"] - res["lone_pair_expected_s"]) > CHECK_TOLERANCE * res["lone_pair_expected_s"]:
            failures.append(f"{cname} {mname}: a lone pair takes {res['lone_pair_s']!r} s, "
                            f"latency and bandwidth after factors give {res['lone_pair_expected_s']!r} s")
        if res["affine_worst"] > CHECK_TOLERANCE:
            failures.append(f"{cname} {mname}: a calibration transfer's time is not affine in 1/bandwidth "
                            f"(relative difference {res['affine_worst']:.2e})")
    print(f"- measured k-pair sweep: mean {mean(measured) * 1e3:.3f} ms over its transfers")
    if not failures:
        print("- self-checks: under both models a lone pair takes latency x latency factor + bytes / "
              "(bandwidth x bandwidth factor), and every calibration transfer's time is affine in "
              f"1/bandwidth, within {CHECK_TOLERANCE:g} relative")
    print()

    # Held out, as commcal ingests the logs: every all-to-all, and the exchanges and cycles but
    # the smallest k of each (commcal's exchange_calibration and cycle_calibration).
    smallest = {name: min(t["k"] for t in tests if t["test"] == name) for name in TESTS}
    rows = []
    for i, t in enumerate(tests):
        if t["test"] == "send" or (t["test"] != "alltoall" and t["k"] == smallest[t["test"]]):
            continue
        if t["test"] == "alltoall":
            if t["ranks"] not in colls:
                raise InputError(f"{rundir}/accuracy.json: no all-to-all on {t['ranks']} ranks")
            cc, cmeasured = colls[t["ranks"]]
            if abs(cmeasured - t["measured"]) > 1e-9 * t["measured"]:
                failures.append(f"{cname} alltoall {t['ranks']}: logs' mean {t['measured']!r} s, "
                                f"run directory's {cmeasured!r} s")
            sg = [(r["tests"][i] - t["measured"]) / t["measured"] for r in results]
            rows.append((label(t), t["measured"], cc, sg))
            continue
        s = settings.get(setting_of(t))
        if s is None:
            raise InputError(f"{rundir}/accuracy.json: no setting {setting_of(t)}, want one per held-out test")
        if s["_transfers"] != len(t["flows"]):
            raise InputError(f"{rundir}/accuracy.json: setting {setting_of(t)} has {s['_transfers']} "
                             f"transfers, the logs' test {len(t['flows'])}")
        sg = [mean([(p - m) / m for p, (_, _, m) in zip(r["tests"][i], t["flows"])]) for r in results]
        rows.append((f"{label(t)}, {setting_of(t)}", mean([m for _, _, m in t["flows"]]), s, sg))

    # Models whose errors print the same on every row share a column, in accuracy.json's order.
    columns = []
    for m in models:
        key = tuple(pct(r[2][m]) for r in rows)
        for col in columns:
            if col[1] == key:
                col[0].append(m)
                break
        else:
            columns.append(([m], key))
    heads = [", ".join(n + (" *" if n == default else "") for n in names) for names, _ in columns]
    print("| test | measured mean | " + " | ".join(heads) + " | SimGrid CM02 | SimGrid LV08 |")
    print("|---|---:|" + "---:|" * (len(heads) + 2))
    for j, (lab, meas, _, sg) in enumerate(rows):
        cells = [col[1][j] for col in columns] + [pct(e) for e in sg]
        print(f"| {lab} | {meas * 1e3:.2f} ms | " + " | ".join(cells) + " |")
    print()
    print(f"(mean signed error (predicted - measured) / measured; * commcal's default model; run directory {rundir})")
    print()
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("runs", nargs="*", metavar="NAME=RUNDIR",
                        help="a cluster of --data and commcal's run directory of its logs")
    parser.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "saturation"),
                        help="folder of NAME.toml, NAME.ranks and NAME_*/load_*.csv (default data/saturation)")
    parser.add_argument("--latency", type=float,
                        help="route latency in seconds (default: SimGrid's calibration of the cluster, miriel and plafrim)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.child:
        json.dump(child(json.load(sys.stdin)), sys.stdout)
        return 0
    if not opts.runs:
        parser.error("give at least one NAME=RUNDIR")
    if opts.latency is not None and not (opts.latency >= 0 and math.isfinite(opts.latency)):
        parser.error("--latency: want a finite number of seconds >= 0")
    failures = []
    try:
        for arg in opts.runs:
            name, sep, rundir = arg.partition("=")
            if not sep or not name or not rundir:
                parser.error(f"{arg!r}: want NAME=RUNDIR")
            failures += cluster_report(name, rundir, os.path.normpath(opts.data), opts.latency)
    except InputError as e:
        print(f"simgrid_saturation: {e}", file=sys.stderr)
        return 2
    for f in failures:
        print(f"self-check failed: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

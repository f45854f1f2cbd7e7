#!/usr/bin/python3
"""Run commcal's 10^4-transfer two-rack benchmark pattern under SimGrid's max-min model.

Reads the inputs that `make simgrid-inputs` writes (see README.md in this directory):
platform.json (nodes, racks and the capacities commcal's models use), pattern.csv (the
transfers), maxmin_times.csv (commcal maxmin's completion times) and commcal_times.csv (every
commcal model's wall time). Builds the same platform for SimGrid -- one split-duplex link per
NIC between the node and its rack's switch, one split-duplex backbone between the two
switches, no latency -- starts every transfer at time 0 with Comm.sendto_async, and waits for
them all. Each SimGrid configuration runs in a process of its own (SimGrid has one engine per
process); the wall time measured is that of Engine.run only (the transfers' creation
included, the platform's loading not).

Prints, per configuration, the wall time and, where the configuration computes the same
max-min sharing as commcal's maxmin, the largest relative difference of a completion time;
then every commcal model's wall time and how many times faster it is than SimGrid's fastest
max-min configuration.

Run with Debian's interpreter, which has the python3-simgrid module:

    /usr/bin/python3 bench/simgrid_maxmin.py [--dir bench/out] [--json FILE]
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time

# Completion times must agree with commcal maxmin within this relative tolerance. SimGrid's
# solver works to maxmin/precision (1e-5, relative, on rates it considers equal) and
# surf/precision (1e-9 s on event dates); on this pattern the differences are about 1e-12.
TOLERANCE = 1e-6

# (name, SimGrid options, whether the model is commcal's maxmin: CM02 without cross-traffic
# is plain max-min fair sharing with every link's bandwidth as given).
CONFIGS = [
    ("CM02, no cross-traffic, optim Lazy (default optim)",
     ["network/model:CM02", "network/crosstraffic:0"], True),
    ("CM02, no cross-traffic, optim Full",
     ["network/model:CM02", "network/crosstraffic:0", "network/optim:Full"], True),
    ("CM02 defaults (5% cross-traffic on the reverse path)",
     ["network/model:CM02"], False),
    ("default model (LV08)", [], False),
]


def read_inputs(directory):
    with open(os.path.join(directory, "platform.json"), encoding="utf-8") as f:
        platform = json.load(f)
    with open(os.path.join(directory, "pattern.csv"), encoding="utf-8", newline="") as f:
        flows = [(row["src"], row["dst"], float(row["bytes"])) for row in csv.DictReader(f)]
    return platform, flows


def platform_xml(platform):
    """The two-rack platform as SimGrid XML: a Floyd zone of hosts and one router per rack."""
    racks = sorted({n["rack"] for n in platform["nodes"]})
    if len(racks) != 2:
        raise SystemExit(f"platform.json has {len(racks)} racks, this script builds two")
    nic, backbone = platform["nic_bytes_per_s"], platform["backbone_bytes_per_s"]
    lines = ["<?xml version='1.0'?>",
             '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
             '<platform version="4.1">',
             '<zone id="two-rack" routing="Floyd">']
    for n in platform["nodes"]:
        lines.append(f'  <host id="{n["name"]}" speed="1Gf"/>')
    for r in racks:
        lines.append(f'  <router id="switch-{r}"/>')
    for n in platform["nodes"]:
        lines.append(f'  <link id="nic-{n["name"]}" bandwidth="{nic!r}Bps" latency="0s" sharing_policy="SPLITDUPLEX"/>')
    lines.append(f'  <link id="backbone" bandwidth="{backbone!r}Bps" latency="0s" sharing_policy="SPLITDUPLEX"/>')
    for n in platform["nodes"]:
        host, switch = n["name"], f'switch-{n["rack"]}'
        lines.append(f'  <route src="{host}" dst="{switch}" symmetrical="NO"><link_ctn id="nic-{host}" direction="UP"/></route>')
        lines.append(f'  <route src="{switch}" dst="{host}" symmetrical="NO"><link_ctn id="nic-{host}" direction="DOWN"/></route>')
    a, b = racks
    lines.append(f'  <route src="switch-{a}" dst="switch-{b}" symmetrical="NO"><link_ctn id="backbone" direction="UP"/></route>')
    lines.append(f'  <route src="switch-{b}" dst="switch-{a}" symmetrical="NO"><link_ctn id="backbone" direction="DOWN"/></route>')
    lines += ["</zone>", "</platform>", ""]
    return "\n".join(lines)


def run_one(directory, index):
    """Runs configuration index in this process; prints a JSON result on stdout."""
    from simgrid import Actor, Comm, Engine, Host  # pylint: disable=import-outside-toplevel

    name, options, _ = CONFIGS[index]
    platform, flows = read_inputs(directory)
    xml = os.path.join(directory, "platform.xml")
    with open(xml, "w", encoding="utf-8") as f:
        f.write(platform_xml(platform))
    args = [sys.argv[0], "--log=root.thres:critical"] + [f"--cfg={o}" for o in options]
    engine = Engine(args)
    engine.load_platform(xml)
    comms = []

    def start_all():
        hosts = {}
        for src, dst, size in flows:
            s = hosts.get(src) or hosts.setdefault(src, Host.by_name(src))
            d = hosts.get(dst) or hosts.setdefault(dst, Host.by_name(dst))
            comms.append(Comm.sendto_async(s, d, int(size)))
        Comm.wait_all(comms)

    Actor.create("start-all", Host.by_name(flows[0][0]), start_all)
    start = time.perf_counter()
    engine.run()
    wall = time.perf_counter() - start
    json.dump({"config": name, "wall_seconds": wall, "makespan": engine.clock,
               "times": [c.finish_time for c in comms]}, sys.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"),
                        help="directory of the inputs written by `make simgrid-inputs` (default bench/out)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--run", type=int, help=argparse.SUPPRESS)  # one configuration, in a child process
    opts = parser.parse_args()
    if opts.run is not None:
        run_one(opts.dir, opts.run)
        return 0

    with open(os.path.join(opts.dir, "maxmin_times.csv"), encoding="utf-8", newline="") as f:
        reference = [float(row["seconds"]) for row in csv.DictReader(f)]
    with open(os.path.join(opts.dir, "commcal_times.csv"), encoding="utf-8", newline="") as f:
        commcal = [(row["model"], float(row["seconds"]), int(row["steps"])) for row in csv.DictReader(f)]
    _, flows = read_inputs(opts.dir)
    print(f"{len(flows)} transfers, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print()

    results = []
    for i, (name, _, is_maxmin) in enumerate(CONFIGS):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--dir", opts.dir, "--run", str(i)],
                             check=True, capture_output=True, text=True).stdout
        res = json.loads(out)
        res["worst_relative_difference"] = max(abs(t - r) / r for t, r in zip(res["times"], reference))
        res["same_model_as_maxmin"] = is_maxmin
        results.append(res)
        verdict = ""
        if is_maxmin:
            ok = res["worst_relative_difference"] <= TOLERANCE
            verdict = f"  max rel. difference to commcal maxmin {res['worst_relative_difference']:.2e} ({'ok' if ok else 'OVER'} {TOLERANCE:g})"
        print(f"SimGrid {name}: {res['wall_seconds']:.3f} s{verdict}")

    best = min(r["wall_seconds"] for r in results if r["same_model_as_maxmin"])
    print()
    print(f"{'commcal model':<20} {'seconds':>10} {'steps':>7} {'times faster than SimGrid CM02 (' + format(best, '.2f') + ' s)':>44}")
    for model, seconds, steps in commcal:
        ratio = best / seconds  # below 10 (below 1: slower than SimGrid) to two significant digits
        spec = ".0f" if ratio >= 10 else ".2g"
        print(f"{model:<20} {seconds:>10.4f} {steps:>7d} {ratio:>44{spec}}")
    if opts.json:
        with open(opts.json, "w", encoding="utf-8") as f:
            json.dump({"simgrid": [{k: v for k, v in r.items() if k != "times"} for r in results],
                       "commcal": [{"model": m, "seconds": s, "steps": n} for m, s, n in commcal]}, f, indent=2)
    bad = [r for r in results if r["same_model_as_maxmin"] and r["worst_relative_difference"] > TOLERANCE]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Simulates concurrent-transfer patterns on a platform that commcal exported (TestSimGridRoundTrip).

    python3 simgrid_roundtrip.py PLATFORM JOB [--cfg=KEY:VALUE ...]

JOB is a JSON file: {"patterns": [[[src, dst, bytes], ...], ...], "routes": [[src, dst], ...]}.
The patterns run one after the other in one simulation (SimGrid has one engine per process):
every transfer of a pattern starts at the same instant with Comm.sendto_async, and the next
pattern starts when all have finished. Prints one JSON object on stdout:
{"times": [[seconds, ...], ...]} (each transfer's completion time from its pattern's start, in
input order) and "routes": [[[link, ...], latency], ...] (Host.route_to for each pair).
"""

import json
import sys

from simgrid import Actor, Comm, Engine, Host


def main():
    platform, job_file, options = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(job_file, encoding="utf-8") as f:
        job = json.load(f)
    engine = Engine([sys.argv[0], "--log=root.thres:critical"] + options)
    engine.load_platform(platform)
    out = {"times": [], "routes": []}

    def run():
        hosts = {h.name: h for h in engine.all_hosts}
        for src, dst in job["routes"]:
            links, latency = hosts[src].route_to(hosts[dst])
            out["routes"].append([[link.name for link in links], latency])
        for pattern in job["patterns"]:
            start = Engine.clock
            comms = [Comm.sendto_async(hosts[s], hosts[d], int(b)) for s, d, b in pattern]
            Comm.wait_all(comms)
            out["times"].append([c.finish_time - start for c in comms])

    Actor.create("roundtrip", engine.all_hosts[0], run)
    engine.run()
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()

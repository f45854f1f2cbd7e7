#!/usr/bin/env python3
"""How much of a model's error is a function of a transfer's counts that other campaigns teach.

An analysis of issue 12's error budget (docs/journal/tcp-campaigns.md, round 19), run by hand,
not by the test suite. It learns the log error log(measured/predicted) of a model on held-out
random patterns from a transfer's counts in its pattern, with gradient-boosted trees trained on
the other campaigns of the same cluster shape (never on one measured from the same catalogue,
whose patterns are the same), and reports the share within ±10% and the mean |ε| before and
after the learned correction. The trees are scikit-learn's HistGradientBoostingRegressor, an
analysis tool here, not part of commcal.

Input: directories named after the datasets, each holding csv/predictions.csv, written by

    commcal validate --in-sample --out v/NAME data/tcp/campaigns/SHAPE/NAME
    commcal export csv --out v/NAME/csv v/NAME/predictions.parquet

for the held-out predictions, or, for the in-sample ones (the budget's "in sample + counts"),

    commcal export csv --out w/NAME/csv v/NAME/predictions_in_sample.parquet

(the table is a predictions table: it lands as w/NAME/csv/predictions.csv).

Usage (Debian: apt-get install python3-sklearn, run with /usr/bin/python3):

    count_learner.py v/                     each campaign corrected by the others (leave one
                                            catalogue out, within its shape)
    count_learner.py v/ --test w/NAME ...   campaigns of w/ corrected by trees trained on all of v/

The features of a transfer from s to r in its pattern: the other transfers out of s and into
r, the transfers into s and out of r (its acknowledgements' path), whether it crosses the
backbone and, if so, the other transfers on the backbone its way and the reverse way, its size
in MiB, the most transfers into a receiver of s's other transfers and out of a sender of r's,
and the pattern's |N| and d.
"""
import argparse
import collections
import csv
import math
import os
import re
import sys

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor


def shape(name):
    """The cluster shape a dataset was measured on, from its name."""
    if name.startswith('three-rack'):
        return 'three racks'
    return '100m' if '100m' in name else '1g'


def catalogue(name):
    """Datasets measured from one catalogue share their patterns: never train on a twin."""
    if 'seed9' in name:
        return 'seed9'
    m = re.search(r'(heldout|seed)(\d+)', name)
    return m.group(0) if m else name


def rack(node):
    return node.rstrip('0123456789')


def features(flows, t):
    s, r = t['src_node'], t['dst_node']
    others = [o for o in flows if o is not t]
    so = sum(o['src_node'] == s for o in others)
    ri = sum(o['dst_node'] == r for o in others)
    si = sum(o['dst_node'] == s for o in flows)
    ro = sum(o['src_node'] == r for o in flows)
    inter = rack(s) != rack(r)
    bb_with = sum(rack(o['src_node']) == rack(s) and rack(o['dst_node']) == rack(r) for o in others) if inter else -1
    bb_back = sum(rack(o['src_node']) == rack(r) and rack(o['dst_node']) == rack(s) for o in flows) if inter else -1
    into = collections.Counter(o['dst_node'] for o in flows)
    out = collections.Counter(o['src_node'] for o in flows)
    cs = max([into[o['dst_node']] for o in others if o['src_node'] == s] or [0])
    cr = max([out[o['src_node']] for o in others if o['dst_node'] == r] or [0])
    n, d = t['setting'].split('-')
    return [so, ri, si, ro, int(inter), bb_with, bb_back, int(t['bytes']) >> 20, cs, cr, int(n[1:]), int(d[1:])]


def load(path, model):
    """A campaign's held-out random transfers: features, log errors, predictions, means, settings."""
    patterns = collections.defaultdict(list)
    with open(os.path.join(path, 'csv', 'predictions.csv'), newline='') as f:
        for row in csv.DictReader(f):
            if row['experiment'] == 'random' and row['model'] == model:  # a row per transfer and model
                patterns[row['pattern_id']].append(row)
    X, y, pred, meas, setting = [], [], [], [], []
    for flows in patterns.values():
        for t in flows:
            p, m = float(t['predicted_s']), float(t['measured_s'])
            X.append(features(flows, t))
            y.append(math.log(m / p))
            pred.append(p)
            meas.append(m)
            setting.append(t['setting'])
    return np.array(X, float), np.array(y), np.array(pred), np.array(meas), setting


def learner(X, y):
    # Settings chosen once in round 14 for a few thousand transfers per shape, not tuned here.
    return HistGradientBoostingRegressor(max_iter=200, learning_rate=0.05, max_leaf_nodes=15,
                                         min_samples_leaf=40, l2_regularization=1.0, random_state=0).fit(X, y)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('train', help='directory of validated development datasets')
    ap.add_argument('--test', nargs='*', default=[], help='validated datasets to correct with trees trained on all of train')
    ap.add_argument('--model', default='ackpath-alpha')
    a = ap.parse_args()
    train = {n: load(os.path.join(a.train, n), a.model) for n in sorted(os.listdir(a.train))
             if os.path.exists(os.path.join(a.train, n, 'csv', 'predictions.csv'))}
    targets = [(n, train[n]) for n in train] if not a.test else \
        [(os.path.basename(os.path.normpath(t)), load(t, a.model)) for t in a.test]
    sums = collections.defaultdict(lambda: np.zeros(5))
    for name, (X, y, pred, meas, setting) in targets:
        peers = [m for m in train if m != name and shape(m) == shape(name) and catalogue(m) != catalogue(name)]
        if not peers:
            sys.exit(f'{name}: no other campaign of its shape to learn from')
        fit = learner(np.vstack([train[m][0] for m in peers]), np.concatenate([train[m][1] for m in peers]))
        before = np.abs(pred / meas - 1)
        after = np.abs(pred * np.exp(fit.predict(X)) / meas - 1)
        for key in {(sh, st) for sh in (shape(name), 'all') for st in set(setting) | {'all'}}:
            sel = np.array([key[1] == 'all' or s == key[1] for s in setting])
            sums[key] += [sel.sum(), (before[sel] <= 0.1).sum(), (after[sel] <= 0.1).sum(), before[sel].sum(), after[sel].sum()]
    print('shape        setting  transfers  within ±10%: model → corrected   mean |ε|: model → corrected')
    for (sh, st), (n, w0, w1, e0, e1) in sorted(sums.items()):
        print(f'{sh:12s} {st:8s} {int(n):9d}  {100*w0/n:5.1f}% → {100*w1/n:5.1f}%             {100*e0/n:5.2f}% → {100*e1/n:5.2f}%')


if __name__ == '__main__':
    main()

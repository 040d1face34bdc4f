#!/usr/bin/env python3
"""Training-table rows (`sparsecast collect`) as evaluation records (`results.jsonl`), so that
`sparsecast evaluate --report-only --repredict --profile P --out DIR` scores a stored profile —
its pick, second stage included — on matrices it never trained on (docs/ACCURACY.md, session 26).

    python3 scripts/table_to_records.py TABLE.jsonl.gz [--skip TRAINED.jsonl.gz ...] > DIR/results.jsonl

Rows whose matrix a --skip table holds (what the profile trained on) are left out. Every record
carries the row's features (the re-prediction reads them)."""
import gzip, json, sys

def rows(path):
    with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as f:
        for line in f:
            if line.strip():
                yield json.loads(line)

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
table, skip_paths = args[0], []
if '--skip' in args:
    skip_paths = args[args.index('--skip') + 1:]
skip = {(r['matrix'], r['precision']) for p in skip_paths for r in rows(p)}
n = 0
for r in rows(table):
    if (r['matrix'], r['precision']) in skip:
        continue
    for t in r['times']:
        cfg = t['config']
        rec = {
            'schema': 1, 'matrix': r['matrix'], 'source': r['source'],
            'precision': r['precision'], 'config': cfg,
            'kind': 'vendor' if cfg.startswith('cusparse') else 'ours',
            'format': None, 'status': t['status'], 'reason': t.get('reason'),
            'backend': r['backend'], 'device': r['device'],
            'runs': r['protocol']['runs'], 'warmup': r['protocol']['warmup'],
            'median_s': t.get('median_s'), 'warm_mean_s': t.get('warm_mean_s'),
            'protocol': r['protocol'], 'footprint_bytes': t.get('footprint_bytes'),
            'effective_bytes': None, 'max_rel_error': None, 'prepare_s': None,
            'features': r['features'], 'predictions': {}, 'plan': None,
        }
        if t.get('spread') is not None:
            rec['spread'] = t['spread']
        print(json.dumps(rec))
    n += 1
print(f'{n} rows', file=sys.stderr)

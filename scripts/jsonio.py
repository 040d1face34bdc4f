"""Reading the JSON results kept in docs/, plain or gzip-compressed (the large ones are kept as
.json.gz), for the scripts beside this file: `from jsonio import jglob, jload`."""
import glob
import gzip
import json


def jglob(pattern, **kw):
    """The files of `pattern` (ending in .json) and their gzip-compressed twins (.json.gz, as docs/
    keeps the large ones), sorted as if uncompressed; a .json shadows its .json.gz."""
    fs = set(glob.glob(pattern, **kw))
    fs |= {f for f in glob.glob(pattern + ".gz", **kw) if f[:-3] not in fs}
    return sorted(fs, key=lambda f: f[:-3] if f.endswith(".gz") else f)


def jload(path):
    """json.load of a .json or a .json.gz file."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)

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


def table_rows(path):
    """The rows of a training table (`collect`'s JSON Lines, gzip-compressed), in order."""
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_table(path, rows):
    """Write `rows` as a gzip-compressed JSON Lines table at `path`, atomically (a temporary file
    beside it, then a rename), so a failure leaves the old table whole."""
    import os
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            for r in rows:
                f.write((json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n").encode())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise

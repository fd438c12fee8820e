"""Print the rows of a .npy array (int32 or int64, 1-D or 2-D) as
tab-separated lines, without numpy: a second, independent reader of the
format for the kg-ingest tests.  With --numpy, use numpy.load instead (the
tests compare both outputs when numpy is installed).

usage: python3 npyrows.py [--numpy] [--shape] file.npy
"""
import ast
import struct
import sys


def read_plain(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY" or data[6:8] != b"\x01\x00":
        sys.exit("%s: not a .npy v1.0 file" % path)
    hlen = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    start = 10 + hlen
    if start % 64 != 0:
        sys.exit("%s: data starts at %d, not a multiple of 64" % (path, start))
    descr, shape = header["descr"], header["shape"]
    if header["fortran_order"]:
        sys.exit("%s: fortran order" % path)
    code = {"<i4": "i", "<i8": "q"}[descr]
    size = struct.calcsize(code)
    count = 1
    for d in shape:
        count *= d
    if len(data) - start != count * size:
        sys.exit("%s: %d data bytes for shape %s" % (path, len(data) - start, shape))
    vals = struct.unpack("<%d%s" % (count, code), data[start:])
    width = shape[1] if len(shape) == 2 else 1
    rows = [vals[i:i + width] for i in range(0, count, width)]
    return descr, shape, rows


def read_numpy(path):
    import numpy
    a = numpy.load(path)
    rows = a.reshape(len(a), -1).tolist() if a.ndim == 2 else [[v] for v in a.tolist()]
    return a.dtype.str, a.shape, rows


def main():
    args = sys.argv[1:]
    use_numpy = "--numpy" in args
    shape_only = "--shape" in args
    path = [a for a in args if not a.startswith("--")][0]
    descr, shape, rows = (read_numpy if use_numpy else read_plain)(path)
    if shape_only:
        print(descr, " ".join(str(d) for d in shape))
        return
    out = sys.stdout
    for r in rows:
        out.write("\t".join(str(v) for v in r) + "\n")


main()

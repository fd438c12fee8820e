# .npy files written by kgpipe load in numpy with the right dtype, shape and
# values, and files numpy writes (every supported dtype) read back here.
. "$KG_TOP/tests/cli/lib.sh"
plan 10
tool=$KG_BUILD/aux/npy_tool
py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "numpy round-trip: python3 with numpy not installed"
fi
mkdir out
check "npy_tool writes samples" "$tool" write out

check "numpy loads every kgpipe array with the right values" "$py" - out <<'PY'
import glob, os, sys
import numpy as np
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.npy")))
assert len(files) == 14, files
for f in files:
    a = np.load(f, mmap_mode="r")
    base = os.path.basename(f)
    kind, nd = base.split("_")[0], int(base.split("_")[1][0])
    assert a.dtype == np.dtype(kind.replace("i", "<i").replace("u", "<u").replace("f", "<f")), (f, a.dtype)
    assert a.shape == (5, 4, 3)[:nd], (f, a.shape)
    assert a.flags["C_CONTIGUOUS"]
    want = np.arange(a.size, dtype=np.float64) * 3 + 1
    if kind.startswith("f"):
        want = want + 0.5
    got = np.asarray(a, dtype=np.float64).ravel()
    if kind == "u1":
        want = want % 256
    assert np.array_equal(got, want), f
    # data starts 64-byte aligned
    with open(f, "rb") as fh:
        head = fh.read(10)
    hlen = head[8] | (head[9] << 8)
    assert (10 + hlen) % 64 == 0, (f, hlen)
PY

"$py" - <<'PY'
import numpy as np
np.save("n_i4.npy", np.arange(12, dtype="<i4").reshape(3, 4))
np.save("n_i8.npy", np.arange(6, dtype="<i8") - 2)
np.save("n_f4.npy", np.linspace(0, 1, 10, dtype="<f4").reshape(2, 5))
np.save("n_f8.npy", np.array(3.25))
np.save("n_u1.npy", np.arange(7, dtype="u1"))
np.save("n_empty.npy", np.zeros((0, 3), dtype="<i4"))
np.save("n_fortran.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))
np.save("n_big.npy", np.arange(6, dtype=">i4"))
PY
expect() {
	local f=$1 want=$2 got
	got=$("$tool" dump "$f" 2>&1)
	if [ "$got" = "$want" ]; then ok "read numpy $f"; else notok "read numpy $f: got '$got' want '$want'"; fi
}
expect n_i4.npy "<i4 2 3 4 66.000000"
expect n_i8.npy "<i8 1 6 3.000000"
expect n_f4.npy "<f4 2 2 5 5.000000"
expect n_f8.npy "<f8 0 3.250000"
expect n_u1.npy "|u1 1 7 21.000000"
expect n_empty.npy "<i4 2 0 3 0.000000"
expect_fail "fortran order rejected" 1 "fortran_order arrays are not supported" "$tool" dump n_fortran.npy
expect_fail "big-endian rejected" 1 "unsupported dtype '>i4'" "$tool" dump n_big.npy

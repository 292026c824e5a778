"""Check that astropy reads spart weights and regridder files as
docs/formats.md describes.

Usage: check_fits_astropy.py WRITE_WEIGHTS_FITS WORK_FOLDER

Runs the helper program WRITE_WEIGHTS_FITS (tests/unit/write_weights_fits.c)
to save a small, known weights object into WORK_FOLDER, then opens the file
with astropy.io.fits and checks every keyword and column against the numbers
the helper uses.

Then runs test_regridder_fits, built beside the helper, as
`test_regridder_fits --write-example PATH`: it saves its example regridder
(with a batch axis) and prints x and y = A x. The file is opened with
astropy, the CSR matrix rebuilt with NumPy alone from the keywords and
tables, and y reproduced from x.

Exits 77 (skipped) when astropy cannot be imported, unless
SPART_REQUIRE_PARITY=1, when that is a failure.
"""

import os
import subprocess
import sys
import tempfile

SKIPPED = 77

try:
    import numpy as np
    from astropy.io import fits
except ImportError as error:
    if os.environ.get("SPART_REQUIRE_PARITY") == "1":
        print(f"FAIL: SPART_REQUIRE_PARITY=1 but astropy (with numpy) cannot be imported: {error}")
        sys.exit(1)
    print(f"skipped: astropy (with numpy) cannot be imported ({error})")
    sys.exit(SKIPPED)

# The weights of write_weights_fits.c: keep the two files in step.
SHAPE_ORTHOGONAL = (2,)
SHAPE_INPUT = (2, 3, 4)
SHAPE_OUTPUT = (2, 5)
AXIS_INPUT = (1, 2)
AXIS_OUTPUT = (1,)
OFFSETS = np.array([0, 3, 5])
INDICES_INPUT = np.array([0, 5, 11, 2, 7])
INDICES_OUTPUT = np.array([4, 0, 2, 1, 3])
VALUES = np.array([0.5, 0.25, 1.0 / 3.0, -2.0, 1e-300])


def shape_from_keywords(header, prefix):
    """The shape given by <prefix>NDIM and <prefix>DIM0, <prefix>DIM1, ..."""
    return tuple(header[f"{prefix}DIM{k}"] for k in range(header[f"{prefix}NDIM"]))


def axes_from_keywords(header, prefix):
    """The resampled axes given by <prefix>NAX and <prefix>AX0, ..."""
    return tuple(header[f"{prefix}AX{k}"] for k in range(header[f"{prefix}NAX"]))


def check_primary(header, version):
    assert header["SPARTKND"] == "weights", header["SPARTKND"]
    assert header["SPARTVER"] == 1, header["SPARTVER"]
    assert header["SPARTLIB"] == version, (header["SPARTLIB"], version)
    assert header["NAXIS"] == 0
    assert shape_from_keywords(header, "ORT") == SHAPE_ORTHOGONAL
    assert shape_from_keywords(header, "IN") == SHAPE_INPUT
    assert shape_from_keywords(header, "OUT") == SHAPE_OUTPUT
    assert axes_from_keywords(header, "IN") == AXIS_INPUT
    assert axes_from_keywords(header, "OUT") == AXIS_OUTPUT
    assert header["NELEM"] == len(OFFSETS) - 1
    assert header["NENTRIES"] == OFFSETS[-1]
    assert header["INSIZE"] == 12
    assert header["OUTSIZE"] == 5


def check_table(hdu, names, formats, rows):
    assert isinstance(hdu, fits.BinTableHDU), type(hdu)
    assert hdu.columns.names == names, hdu.columns.names
    assert [str(column.format) for column in hdu.columns] == formats
    assert len(hdu.data) == rows, len(hdu.data)


def check_weights(weights, elements):
    check_table(weights, ["INDEX_IN", "INDEX_OUT", "VALUE"], ["K", "K", "D"], OFFSETS[-1])
    check_table(elements, ["START", "COUNT"], ["K", "K"], len(OFFSETS) - 1)
    data = weights.data
    assert data["INDEX_IN"].dtype.kind == "i" and data["INDEX_IN"].dtype.itemsize == 8
    assert data["VALUE"].dtype.kind == "f" and data["VALUE"].dtype.itemsize == 8
    np.testing.assert_array_equal(data["INDEX_IN"], INDICES_INPUT)
    np.testing.assert_array_equal(data["INDEX_OUT"], INDICES_OUTPUT)
    # Bit for bit: the same float64 numbers, not merely close ones.
    assert data["VALUE"].astype("<f8").tobytes() == VALUES.astype("<f8").tobytes()
    np.testing.assert_array_equal(elements.data["START"], OFFSETS[:-1])
    np.testing.assert_array_equal(elements.data["COUNT"], np.diff(OFFSETS))


def check_use_as_matrices(weights, elements, header):
    """What a scientist would do: one dense matrix per orthogonal element."""
    for element, (start, count) in enumerate(zip(elements.data["START"], elements.data["COUNT"])):
        rows = weights.data[start:start + count]
        matrix = np.zeros((header["OUTSIZE"], header["INSIZE"]))
        np.add.at(matrix, (rows["INDEX_OUT"], rows["INDEX_IN"]), rows["VALUE"])
        expected = np.zeros_like(matrix)
        for k in range(OFFSETS[element], OFFSETS[element + 1]):
            expected[INDICES_OUTPUT[k], INDICES_INPUT[k]] += VALUES[k]
        np.testing.assert_array_equal(matrix, expected)


def check_regridder_header(header, version):
    assert header["SPARTKND"] == "regridder", header["SPARTKND"]
    assert header["SPARTVER"] == 1, header["SPARTVER"]
    assert header["SPARTLIB"] == version, (header["SPARTLIB"], version)
    assert header["NAXIS"] == 0
    # The example of test_regridder_fits.c: 2x4x7 to 2x4x5, axis 1 a batch axis.
    assert shape_from_keywords(header, "IN") == (2, 4, 7)
    assert shape_from_keywords(header, "OUT") == (2, 4, 5)
    for prefix in ("IN", "OUT"):
        flags = [header[f"{prefix}BAT{k}"] for k in range(3)]
        assert flags == [False, True, False] and all(type(f) is bool for f in flags), flags
    assert (header["NROWS"], header["NCOLS"], header["NBATCH"]) == (10, 14, 4)
    assert header["NENTRIES"] == 8
    assert header["VALTYPE"] == "float64"
    assert header["GROUPSZ"] == 1 and header["CHUNKLEN"] == 4096


def side_of(header, prefix):
    """A side's shape, its batch axes and its matrix axes (C order each)."""
    shape = shape_from_keywords(header, prefix)
    batch = [k for k in range(len(shape)) if header[f"{prefix}BAT{k}"]]
    matrix = [k for k in range(len(shape)) if not header[f"{prefix}BAT{k}"]]
    return shape, batch, matrix


def apply_with_numpy(header, row_ptr, column, value, x):
    """y = A x as docs/formats.md tells a reader without spart to do it."""
    shape_in, batch_in, matrix_in = side_of(header, "IN")
    shape_out, batch_out, matrix_out = side_of(header, "OUT")
    X = x.reshape(shape_in).transpose(batch_in + matrix_in)
    X = X.reshape(header["NBATCH"], header["NCOLS"])
    rows = np.repeat(np.arange(header["NROWS"]), np.diff(row_ptr))
    Y = np.zeros((header["NBATCH"], header["NROWS"]))
    np.add.at(Y.T, rows, value[:, None] * X[:, column].T)
    order = batch_out + matrix_out
    y = Y.reshape([shape_out[k] for k in order])
    return y.transpose(np.argsort(order))


def check_regridder(helper, work):
    path = os.path.join(work, "operator.fits")
    run = subprocess.run([helper, "--write-example", path], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL: {helper} --write-example exited {run.returncode}: {run.stderr}")
        return None
    lines = run.stdout.strip().split("\n")
    version = lines[0]
    x = np.array([float(v) for v in lines[1].split()])
    y_spart = np.array([float(v) for v in lines[2].split()])
    with fits.open(path) as hdus:
        hdus.verify("exception")
        assert [hdu.name for hdu in hdus] == ["PRIMARY", "ROW_PTR", "ENTRIES"]
        header = hdus[0].header
        check_regridder_header(header, version)
        check_table(hdus["ROW_PTR"], ["ROW_PTR"], ["K"], header["NROWS"] + 1)
        check_table(hdus["ENTRIES"], ["COLUMN", "VALUE"], ["J", "D"], header["NENTRIES"])
        row_ptr = hdus["ROW_PTR"].data["ROW_PTR"].astype(np.int64)
        column = hdus["ENTRIES"].data["COLUMN"].astype(np.int64)
        value = hdus["ENTRIES"].data["VALUE"].astype(np.float64)
        assert row_ptr[0] == 0 and row_ptr[-1] == header["NENTRIES"]
        assert np.all(np.diff(row_ptr) >= 0)
        assert np.any(np.diff(row_ptr) == 0), "the example has empty rows"
        assert np.all((column >= 0) & (column < header["NCOLS"]))
        y = apply_with_numpy(header, row_ptr, column, value, x)
    assert y.shape == (2, 4, 5), y.shape
    # spart sums each row with fma in its plan's order, NumPy without: the
    # same to rounding, not bit for bit.
    np.testing.assert_allclose(y.ravel(), y_spart, rtol=1e-14, atol=1e-15)
    return version


def main():
    helper, folder = sys.argv[1], sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as work:
        path = os.path.join(work, "weights.fits")
        run = subprocess.run([helper, path], capture_output=True, text=True)
        if run.returncode != 0:
            print(f"FAIL: {helper} exited {run.returncode}: {run.stderr}")
            return 1
        version = run.stdout.strip()
        with fits.open(path) as hdus:
            hdus.verify("exception")  # the file follows the FITS standard
            assert [hdu.name for hdu in hdus] == ["PRIMARY", "WEIGHTS", "ELEMENTS"]
            check_primary(hdus[0].header, version)
            check_weights(hdus["WEIGHTS"], hdus["ELEMENTS"])
            check_use_as_matrices(hdus["WEIGHTS"], hdus["ELEMENTS"], hdus[0].header)
        print(f"astropy reads spart {version} weights files as documented")
        operator_helper = os.path.join(os.path.dirname(helper), "test_regridder_fits")
        if not os.path.exists(operator_helper):
            print(f"FAIL: {operator_helper} (built with the tests) is missing")
            return 1
        if check_regridder(operator_helper, work) is None:
            return 1
    print(f"astropy and NumPy read spart {version} regridder files as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())

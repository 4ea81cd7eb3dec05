"""A model folder's files are bounded before they are read: ``model.npz`` by the sizes its zip
members declare and the headers of its arrays (against the network ``config.json`` describes),
``config.json`` and ``card.json`` by their length.

A deflated member of a gigabyte of zeros takes a megabyte on disk: it must be refused from its
declared size, quickly and without the memory it would take."""

from __future__ import annotations

import io
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from puzzlezero.errors import ModelFileError
from puzzlezero.model_folders import find_model_dir
from puzzlezero.nn import io as nn_io
from puzzlezero.nn.io import MAX_JSON_BYTES, read_config, read_model, weight_bound

GIB = 1 << 30


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the shipped cube2 model (float16 weights)."""
    shipped = find_model_dir("cube2")
    assert shipped is not None
    return Path(shutil.copytree(shipped, tmp_path / "m"))


def npy_header(shape: tuple[int, ...], dtype: str = "<f2") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def write_bomb(
    path: Path, name: str, data_bytes: int, shape: tuple[int, ...], extra: dict | None = None
) -> None:
    """A ``model.npz`` whose member ``name`` is an .npy header for ``shape`` and ``data_bytes``
    zeros, deflated, written in chunks (the test never holds them); ``extra`` adds small arrays."""
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for key, array in (extra or {}).items():
            with zf.open(key + ".npy", "w") as f:
                np.lib.format.write_array(f, array)
        with zf.open(name + ".npy", "w", force_zip64=True) as f:
            f.write(npy_header(shape))
            left = data_bytes
            while left > 0:
                f.write(chunk[: min(left, len(chunk))])
                left -= len(chunk)


def refused_quickly(folder: Path, match: str) -> None:
    # refused from the declared size, before inflating: the peak stays far below the member's size
    # (memory, not the wall clock, is what shows it was not read)
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match=match):
            read_model(folder)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 << 20, f"peak {peak >> 20} MiB"


def test_a_gigabyte_member_deflated_is_refused_from_its_declared_size(folder: Path) -> None:
    write_bomb(folder / "model.npz", "value.bias", GIB, (GIB // 2,))
    assert (folder / "model.npz").stat().st_size < 8 << 20  # small on disk
    with zipfile.ZipFile(folder / "model.npz") as zf:
        assert zf.getinfo("value.bias.npy").file_size > GIB
    refused_quickly(
        folder, r"model\.npz: value\.bias\.npy would take 1,073,741,952 bytes uncompressed, more than"
    )


def test_a_header_declaring_more_than_its_member_holds_is_refused_unread(folder: Path) -> None:
    # a few bytes of data behind a header that asks for a 16 GiB array
    write_bomb(folder / "model.npz", "value.bias", 64, (8 * GIB,))
    refused_quickly(
        folder, r"value\.bias\.npy: .*8,589,934,592 numbers.* more than the network of config\.json"
    )


def test_a_header_that_does_not_match_its_members_size_is_refused(folder: Path) -> None:
    write_bomb(folder / "model.npz", "value.bias", 64, (1000,))
    refused_quickly(folder, r"value\.bias\.npy: its header declares 2,000 bytes of data, the member holds 64")


def test_members_each_within_the_bound_but_not_together_are_refused(folder: Path) -> None:
    config = read_config(folder)[1]
    bound = weight_bound(config, "float16")
    third = bound * 2 // 5 // 2 * 2  # bytes of data of each of three members: 6/5 of the bound in all
    chunk = bytes(1 << 22)
    with zipfile.ZipFile(folder / "model.npz", "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name in ("a", "b", "c"):
            with zf.open(name + ".npy", "w") as f:
                f.write(npy_header((third // 2,)))
                for lo in range(0, third, len(chunk)):
                    f.write(chunk[: min(len(chunk), third - lo)])
    refused_quickly(
        folder, rf"model\.npz: its 3 arrays would take [\d,]+ bytes uncompressed, more than the {bound:,}"
    )


def test_arrays_in_another_float_type_than_config_json_says_are_refused(folder: Path) -> None:
    with np.load(folder / "model.npz") as archive:
        arrays = {k: archive[k] for k in archive.files}
    arrays["value.bias"] = arrays["value.bias"].astype(np.float64)
    np.savez(folder / "model.npz", **arrays)
    with pytest.raises(
        ModelFileError, match=r"model\.npz: value\.bias\.npy holds float64, expected float16 \(config\.json\)"
    ):
        read_model(folder)


def test_a_sound_model_reads_as_before(folder: Path) -> None:
    files = read_model(folder)
    with np.load(folder / "model.npz") as archive:
        for key in archive.files:
            expected = archive[key]
            got = files.weights[key]
            assert got.shape == expected.shape
            assert got.dtype == (np.float32 if expected.dtype.kind == "f" else expected.dtype)
            np.testing.assert_array_equal(got, expected.astype(got.dtype))
            assert got.flags.writeable


def test_a_fortran_order_array_reads_in_its_order(folder: Path) -> None:
    with np.load(folder / "model.npz") as archive:
        arrays = {k: archive[k] for k in archive.files}
    key = next(k for k, a in arrays.items() if a.ndim == 2)
    arrays[key] = np.asfortranarray(arrays[key])
    np.savez(folder / "model.npz", **arrays)
    np.testing.assert_array_equal(read_model(folder).weights[key], arrays[key].astype(np.float32))


@pytest.mark.parametrize("name", ["config.json", "card.json"])
def test_an_oversized_json_file_is_refused_before_it_is_parsed(folder: Path, name: str) -> None:
    with open(folder / name, "wb") as f:
        f.write(b"{" + b" " * (MAX_JSON_BYTES + 10) + b"}")
    with pytest.raises(ModelFileError, match=rf"{name}: more than {MAX_JSON_BYTES:,} bytes"):
        read_model(folder)


def test_without_a_config_the_weights_are_bounded_by_a_fixed_cap(folder: Path, monkeypatch) -> None:
    monkeypatch.setattr(nn_io, "MAX_WEIGHT_BYTES", 1 << 20)
    write_bomb(folder / "model.npz", "value.bias", 4 << 20, (2 << 20,))
    with pytest.raises(
        ModelFileError,
        match=r"value\.bias\.npy would take 4,194,432 bytes uncompressed, more than the 1,048,576",
    ):
        nn_io.read_weights(folder)

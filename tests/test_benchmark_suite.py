"""The benchmark suite shipped with the package (``rfexplain/data/benchmarks``): byte for byte the
RFxpl authors' bundle, every file shipped by ``pip install``, and the shapes its README states."""

from __future__ import annotations

import ast
import fnmatch
import gzip
import hashlib
import re
from pathlib import Path

import pytest

from rfexplain import datasets

ROOT = Path(__file__).resolve().parent.parent

#: (name, SHA-256 of the CSV, SHA-256 of its samples file, number of sample instances): the
#: original uncompressed files of the bundle, as checked against them when they were added.
FILES = [
    (
        "ann-thyroid",
        "fabf5c86cd261690c4a616fa25d52c3ee2f10f7df743bb2e462d72544a56a8ea",
        "a12f2ddcc6f97196fbdf8de465e20b18fc448efbaf0729a0eaf491b3775cc046",
        720,
    ),
    (
        "appendicitis",
        "399e68cdfcf0071c1475ef5c99c9f7a6336f98e1f8e4062041f770b3f5cb99a8",
        "164692ef7c9541396ad97f3cfef9c97dca1c70e0023baf427a2a5ac5eb474672",
        43,
    ),
    (
        "banknote",
        "fbc445612e8183bde29d5bfde93da27b2f792e9f0f58d5c75eada828363c29e2",
        "fa5f0cfdc0a20fe45e5229c76d6d1b16da63d9fc00030c2c5ca0d081339bfaa9",
        138,
    ),
    (
        "ecoli",
        "daf05ffa2e161454aac06c32671f890eab7563097ba3c6422b5ea4b98c48318b",
        "9fc1e981d25a55578397134661f4e846177cfde96bf21e901b5d74424ac75dde",
        66,
    ),
    (
        "glass2",
        "6de4234f7cd311e522ee9158d7bfcad409619b7d583131e41dd141fbe4245b09",
        "625db47a506eac4e3424cabd509ad849474d4f6614b315597e6c1865136ac1fb",
        66,
    ),
    (
        "ionosphere",
        "3d3b6bd8eb81c103ba39e2dbf072f60414c283526f70745fb4cf048e80653956",
        "49e19fc1efcf876fa2387c8c0662ec2c11dc5c1fac569d028475266ca3c99715",
        71,
    ),
    (
        "iris",
        "119e30db8a4ea8b33723603743591a5f8229684e6236d89ef1966a72d7293607",
        "7bde1999598a89164d58d392daaed8ef7976597ec2f82e27274c25c423a15a5c",
        60,
    ),
    (
        "magic",
        "319eeefbf0aa43f3c5c890730c5ba1c345fbd82bf9d2f1a2cc7a6ce1899d2509",
        "262e6b74b0c6d8cede91a2291651b1cffeb30a9c70ac428fffedc2860a449596",
        381,
    ),
    (
        "mofn-3-7-10",
        "794296bb14a91e410433e4c2ea0a7d5c6c90514ac0b5669987a0cc3eb2a5d02a",
        "a6e7203845de38e408703c4dce0733940b429ed5e880f4c90efa45f6c97fc7c7",
        133,
    ),
    (
        "new-thyroid",
        "73950c62b8763efc19fbc076f64632f1f2496aead5ee45cdfdd6099a181ca076",
        "3d473f81db83d5f78175cd7b3ff8769bde378c12969a7bad8b10c560c6985eef",
        43,
    ),
    (
        "phoneme",
        "c43e5e008ee760dcb280b052416cda433c608d059d5447afd7f447cbbc09f564",
        "1b0c01dc01dc8e0ab6d9783e7dcf384054f4f84bf6732dbf119cac1a079a448b",
        541,
    ),
    (
        "ring",
        "6477ce43ef8285d03aecd751ee32a65c7f9cd72ed65686c751bd1ff4aae48bfd",
        "8f78c9c923c03b7491b4532280012fe63753dc27a2f611aa281c3d7be14474fa",
        740,
    ),
    (
        "segmentation",
        "6239a38e4feb7a30131404e37a2c76c9b5cddd64d8f93228a75f90ef3f5929cb",
        "683c126ce5e69f8b9e0185e5f38988a8bb9b78feb3521086922c9d358b31b5b9",
        42,
    ),
    (
        "shuttle",
        "e18f20231eaf0df32a81085c2acb04b54117b53323bf9f1cca63699dbab0812c",
        "c377f22c414b3b65994d5bd989ae38b4fa9dc4b66f1b267afa19ef97138ce48a",
        1160,
    ),
    (
        "threeOf9",
        "abb288d3a9547c5f8cf4f8f3c1075d3a74397dcce5b3fa65ae3ee9f86850f68f",
        "f331342c5708ff948da288e6c268781908339f51a69123ba2d0b2e8b6caf9ceb",
        103,
    ),
    (
        "twonorm",
        "a5e403f6a9c8704503573c97fcf75474b8145a05f6f0363a8051a4fc29ee5cca",
        "ad49bed245843c1d5e1451de5d48425e7e0ec963779c8f40f8431971529df3d5",
        740,
    ),
    (
        "waveform-21",
        "a226c1e2fd95f136dd5ad9b5123be9c9828e40a97dee8d496d6f46f605f10bbc",
        "d998df83c426d5cfce221a10e6a2bee2ec62610aef558bd0a2b29eb02ec5da00",
        500,
    ),
    (
        "wine-recog",
        "0cf46aa893c68fb0b21da44288d1dcddcbd52319aa2477d2ce869bfae0c19e58",
        "b1f0f6a4ccafed149a255393bd5a52a5e82299813e3b11f9f39e6ebb4f9c33fe",
        72,
    ),
    (
        "xd6",
        "b6236874c52a2fadae301d0da63e72a027e5ab77cc569b48050d0bd4a9e54d7e",
        "9f78542b300c756033c60eea92fa440cb5046d3c3ce63ca3637ca41e3d3648db",
        195,
    ),
]

#: rows, features, classes (the suite's README table)
SHAPES = {
    "ann-thyroid": (7200, 21, 3),
    "appendicitis": (106, 7, 2),
    "banknote": (1372, 4, 2),
    "ecoli": (327, 7, 5),
    "glass2": (163, 9, 2),
    "ionosphere": (351, 34, 2),
    "iris": (150, 4, 3),
    "magic": (19020, 10, 2),
    "mofn-3-7-10": (1324, 10, 2),
    "new-thyroid": (215, 5, 3),
    "phoneme": (5404, 5, 2),
    "ring": (7400, 20, 2),
    "segmentation": (210, 19, 7),
    "shuttle": (58000, 9, 7),
    "threeOf9": (512, 9, 2),
    "twonorm": (7400, 20, 2),
    "waveform-21": (5000, 21, 3),
    "wine-recog": (178, 13, 3),
    "xd6": (973, 9, 2),
}


def test_the_suite_is_the_19_datasets_with_their_samples() -> None:
    assert datasets.benchmark_names() == sorted(name for name, *_ in FILES) == sorted(SHAPES)
    folder = datasets.benchmark_dir()
    assert sorted(p.name for p in (folder / "samples").iterdir()) == sorted(f"{n}.samples.gz" for n, *_ in FILES)
    readme = (folder / "README.md").read_text()
    assert "MIT License" in readme and "Yacine Izza" in readme and "RFxpl" in readme


@pytest.mark.parametrize("name, csv_sha, samples_sha, n_samples", FILES)
def test_gzipped_files_decompress_to_the_original_bytes(
    name: str, csv_sha: str, samples_sha: str, n_samples: int
) -> None:
    folder = datasets.benchmark_dir()
    assert hashlib.sha256(gzip.decompress((folder / f"{name}.csv.gz").read_bytes())).hexdigest() == csv_sha
    samples = gzip.decompress((folder / "samples" / f"{name}.samples.gz").read_bytes())
    assert hashlib.sha256(samples).hexdigest() == samples_sha


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_dataset_loads_with_the_shape_the_readme_gives(name: str) -> None:
    rows, features, classes = SHAPES[name]
    data = datasets.load(name, datasets.benchmark_dir())
    assert data.X.shape == (rows, features) and len(data.y) == rows and len(data.class_names) == classes
    samples = datasets.load_samples(name, datasets.benchmark_dir())
    n_samples = next(k for n, _, _, k in FILES if n == name)
    assert samples is not None and samples.shape == (n_samples, features)
    readme = (datasets.benchmark_dir() / "README.md").read_text()
    assert f"| {name} | {rows} | {features} | {classes} | {n_samples} |" in readme


def test_package_data_ships_every_file_of_the_suite() -> None:
    """pyproject's package-data globs cover every file under rfexplain/data (so a wheel has them)."""
    section = (ROOT / "pyproject.toml").read_text().split("[tool.setuptools.package-data]", 1)[1]
    found = re.search(r"^rfexplain = (\[.*?\])$", section, re.MULTILINE | re.DOTALL)
    assert found, "no package-data for rfexplain in pyproject.toml"
    patterns = [pattern.split("/") for pattern in ast.literal_eval(found.group(1))]
    package = ROOT / "rfexplain"
    files = [p.relative_to(package).parts for p in (package / "data").rglob("*") if p.is_file()]

    def shipped(parts: tuple[str, ...]) -> bool:  # setuptools' globs: "*" never crosses a "/"
        return any(len(parts) == len(pat) and all(map(fnmatch.fnmatchcase, parts, pat)) for pat in patterns)

    unshipped = ["/".join(parts) for parts in files if not shipped(parts) and "__pycache__" not in parts]
    assert files and not unshipped, unshipped

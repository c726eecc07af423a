"""Datasets: scikit-learn's bundled ones and the benchmark CSV format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rfexplain import UnknownDatasetError, datasets


@pytest.mark.parametrize("name, rows, classes", [("iris", 150, 3), ("wine", 178, 3), ("breast_cancer", 569, 2), ("digits", 1797, 10)])
def test_builtin(name: str, rows: int, classes: int) -> None:
    data = datasets.load(name)
    assert data.X.shape[0] == rows == len(data.y)
    assert len(data.class_names) == classes
    assert set(np.unique(data.y).tolist()) == set(data.class_names)
    assert len(data.feature_names) == data.X.shape[1]


def test_csv_format(tmp_path: Path) -> None:
    (tmp_path / "toy.csv").write_text("a,b,label\n 1.5, 2,  yes\n3,-4.25, no\n1.5,2, yes\n")
    data = datasets.load("toy", tmp_path)
    assert data.feature_names == ("a", "b")
    assert data.X.tolist() == [[1.5, 2.0], [3.0, -4.25], [1.5, 2.0]]
    assert data.y.tolist() == ["yes", "no", "yes"]
    assert data.class_names == ("no", "yes")


def test_csv_numeric_labels_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "nums.csv").write_text("x,target\n0.1,2\n0.2,1\n")
    monkeypatch.setenv("RFEXPLAIN_DATA", str(tmp_path))
    data = datasets.load("nums")
    assert data.y.tolist() == [2, 1] and data.class_names == (1, 2)
    assert "nums" in datasets.available()


def test_unknown_dataset_lists_available(tmp_path: Path) -> None:
    with pytest.raises(UnknownDatasetError, match=r"dataset must be one of \['iris', 'wine', 'breast_cancer', 'digits'.*Got 'nope'"):
        datasets.load("nope", tmp_path)


@pytest.mark.skipif(datasets.find_data_dir() is None, reason="the benchmark CSV directory is not beside this checkout")
def test_benchmark_suite_loads() -> None:
    for name in ("iris", "ionosphere", "ann-thyroid"):
        data = datasets.load(name, datasets.find_data_dir())
        assert data.X.ndim == 2 and len(data.class_names) >= 2
    assert datasets.load("ionosphere").class_names == ("b", "g")
